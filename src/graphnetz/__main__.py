"""``python -m graphnetz list datasets|models|tasks``, ``status``, ``tune`` and ``records``."""

import sys


def main(argv: list[str] | None = None) -> int | None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["status"]:  # its overrides are Hydra's, not argparse options
        from graphnetz.cli.status import main as status

        return status(argv[1:])
    if argv[:1] == ["tune"]:  # likewise: Hydra overrides plus the search's own options
        from graphnetz.tune.__main__ import main as tune

        return tune(argv[1:])
    if argv[:1] == ["records"]:
        from graphnetz.cli.records import main as records

        return records(argv[1:])
    from graphnetz.cli.list import main as listing

    return listing(argv)


if __name__ == "__main__":
    raise SystemExit(main())
