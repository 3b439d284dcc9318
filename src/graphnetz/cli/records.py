"""``python -m graphnetz records save|restore``: keep a sweep's finished records.

    python -m graphnetz records save outputs/multirun/repro_ml_real     # -> results/repro_ml_real
    python -m graphnetz records save outputs/multirun/a outputs/multirun/b   # -> results/a, results/b
    python -m graphnetz records restore results/repro_ml_real          # -> outputs/multirun/repro_ml_real
    python -m graphnetz records restore --all                          # every folder under results/

``--to DIR`` names another destination for a single folder. Then ``python train.py -m ...
resume=true hydra.sweep.dir=outputs/multirun/<name>`` skips every restored run, and the
report or a reproduction script reads them as if the sweep had just run. See
:mod:`graphnetz.sweep.archive` for what is kept and why nothing is ever replaced.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graphnetz.cli.help_text import plain
from graphnetz.run_record import RECORD_NAME
from graphnetz.sweep.archive import ARCHIVE_SUFFIX, restore_records, save_records

ARCHIVE_ROOT = Path("results")
SWEEP_ROOT = Path("outputs/multirun")


def _looks_like_sweep(folder: Path) -> bool:
    return (folder / "multirun.yaml").is_file() or any(folder.glob("*/result.json"))


def _looks_like_archive(folder: Path) -> bool:
    return any(folder.glob("*.json.xz"))


def _holds(folder: Path, pattern: str) -> bool:
    return next(iter(folder.rglob(pattern)), None) is not None


def _wrong_source(action: str, source: Path) -> str | None:
    """Why ``source`` is not what ``action`` reads (a sweep folder for ``save``, an archive
    for ``restore``), or None: a sweep has a ``multirun.yaml`` or records under it, an
    archive ``.json.xz`` records."""
    is_sweep = (source / "multirun.yaml").is_file() or _holds(source, RECORD_NAME)
    is_archive = _holds(source, f"*{ARCHIVE_SUFFIX}")
    if action == "save" and not is_sweep:
        if is_archive:
            return (
                f"{source} is an archive folder (*{ARCHIVE_SUFFIX}), not a sweep: "
                f"save reads a sweep folder; to write it back, records restore {source}"
            )
        return f"{source} holds no run records ({RECORD_NAME}): save reads a sweep folder"
    if action == "restore" and not is_archive:
        if is_sweep:
            return (
                f"{source} is a sweep folder, not an archive (*{ARCHIVE_SUFFIX}): restore "
                f"reads an archive folder; to archive this sweep, records save {source}"
            )
        return (
            f"{source} holds no archived records (*{ARCHIVE_SUFFIX}): "
            "restore reads an archive folder"
        )
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz records",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,  # an example per line
    )
    sub = parser.add_subparsers(dest="action", required=True)
    save = sub.add_parser("save", help="archive sweep folders' finished records")
    save.add_argument("sweeps", type=Path, nargs="+", metavar="sweep")
    save.add_argument(
        "--to", type=Path, help=f"archive folder of one sweep; default: {ARCHIVE_ROOT}/<name>"
    )
    restore = sub.add_parser("restore", help="write archived records back into sweep folders")
    restore.add_argument("archives", type=Path, nargs="*", metavar="archive")
    restore.add_argument(
        "--to", type=Path, help=f"sweep folder of one archive; default: {SWEEP_ROOT}/<name>"
    )
    restore.add_argument(
        "--all", action="store_true", help=f"restore every archive under {ARCHIVE_ROOT}/"
    )
    args = parser.parse_args(argv)

    sources = args.sweeps if args.action == "save" else args.archives
    if args.action == "restore" and args.all:
        if sources or args.to is not None:
            parser.error("--all takes no folders: it restores every archive under results/")
        if not ARCHIVE_ROOT.is_dir():
            parser.error(
                f"--all restores the archives under {ARCHIVE_ROOT}/, and there is none here"
            )
        sources = [a for a in sorted(ARCHIVE_ROOT.iterdir()) if a.is_dir()]
    elif not sources:
        parser.error("restore needs archive folders (or --all)")
    if args.to is not None and len(sources) > 1:
        parser.error(f"--to names the destination of one folder, got {len(sources)} folders")
    root = ARCHIVE_ROOT if args.action == "save" else SWEEP_ROOT
    pairs = [(source, args.to or root / source.resolve().name) for source in sources]
    sources_of: dict[Path, Path] = {}
    for source, target in pairs:
        if not source.is_dir():
            what = "is not a folder" if source.exists() else "does not exist"
            kind = "sweep" if args.action == "save" else "archive"
            parser.error(f"{source} {what}: give a {kind} folder")
        other = sources_of.setdefault(target.resolve(), source)
        if other != source:  # one target would merge two sweeps' records
            parser.error(
                f"{other} and {source} would both go to {target}: "
                f"{args.action} them one at a time, each with its own --to"
            )
        if target.exists() and not target.is_dir():
            parser.error(f"{target} is a file, not a folder: give --to a folder")
        if args.action == "save" and (source / RECORD_NAME).is_file():
            parser.error(
                f"{source} is one run's folder: give the sweep folder that holds it ({source.parent})"
            )
        wrong = _wrong_source(args.action, source)
        if wrong is not None:
            parser.error(wrong)
        if args.action == "save" and _looks_like_sweep(target):
            parser.error(
                f"{target} is a sweep folder, not an archive: archives go to results/<name>"
            )
        if args.action == "restore" and _looks_like_archive(target):
            parser.error(
                f"{target} is an archive folder, not a sweep: sweeps go to outputs/multirun/<name>"
            )

    conflicts = 0
    unreadable: list[str] = []
    for source, target in pairs:
        try:
            if args.action == "save":
                done = save_records(source, target)
            else:
                done = restore_records(source, target)
        except FileNotFoundError as err:
            parser.error(str(err))
        verb = "archived" if args.action == "save" else "restored"
        print(f"{source} -> {target}: {done.summary(verb)}")
        conflicts += len(done.conflicts)
        nothing_else = not (done.written or done.present or done.conflicts or done.not_finished)
        if done.unreadable and nothing_else:  # not one record could be read: say which
            unreadable.extend(_unreadable_paths(args.action, source, done.unreadable))
    if unreadable:
        shown = ", ".join(unreadable[:10]) + (
            f", ... ({len(unreadable) - 10} more)" if len(unreadable) > 10 else ""
        )
        print(f"error: no record could be read: {shown}", file=sys.stderr)
        return 1
    return 1 if conflicts else 0


def _unreadable_paths(action: str, source: Path, names: list[str]) -> list[str]:
    """The files behind the unreadable records ``names`` of ``source``."""
    if action == "save":
        return [str(source / name / RECORD_NAME) for name in names]
    return [str(source / f"{name}{ARCHIVE_SUFFIX}") for name in names]
