"""``python -m graphnetz COMMAND ...``: one entry point for the inspection commands.

Each command parses its own arguments (``status`` and ``tune`` take Hydra overrides, which
are not argparse options), so this only picks the command, names every command in its help
and in the error for one it does not know, and hands the rest of the line over.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys

#: command -> (module whose ``main(argv)`` runs it, one line on what it does)
COMMANDS = {
    "list": ("graphnetz.cli.list", "list datasets, models or task types"),
    "status": (
        "graphnetz.cli.status",
        "where a sweep stands per cell, and a dry run of resuming it",
    ),
    "records": (
        "graphnetz.cli.records",
        "save a sweep's finished records to an archive, or restore them",
    ),
    "tune": (
        "graphnetz.tune.__main__",
        "search one task and model's hyperparameters, write +tuned=<study>",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    width = max(map(len, COMMANDS))
    listing = "\n".join(f"  {name:<{width}}  {line}" for name, (_, line) in COMMANDS.items())
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz",
        usage="python -m graphnetz [-h] COMMAND ...",
        description=f"commands:\n{listing}",
        epilog="python -m graphnetz COMMAND --help describes one command",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def main(argv: list[str] | None = None) -> int | None:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    valid = ", ".join(COMMANDS)
    if not argv:
        parser.error(f"a command is required: one of {valid}")
    command = argv[0]
    if command in ("-h", "--help"):
        parser.print_help()
        return 0
    if command not in COMMANDS:
        close = difflib.get_close_matches(command, COMMANDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        parser.error(f"unknown command {command!r}{hint}; valid: {valid}")
    module, _ = COMMANDS[command]
    try:
        status = importlib.import_module(module).main(argv[1:])
        sys.stdout.flush()  # a reader that is gone shows here, not in Python's exit
    except BrokenPipeError:  # the reader stopped early (``... | head``): end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    raise SystemExit(main())
