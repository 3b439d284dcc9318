"""``python -m graphnetz records save|restore``: keep a sweep's finished records.

    python -m graphnetz records save outputs/multirun/repro_ml_real     # -> results/repro_ml_real
    python -m graphnetz records restore results/repro_ml_real          # -> outputs/multirun/repro_ml_real
    python -m graphnetz records restore --all                          # every folder under results/

Then ``python train.py -m ... resume=true hydra.sweep.dir=outputs/multirun/<name>`` skips
every restored run, and the report or a reproduction script reads them as if the sweep
had just run. See :mod:`graphnetz.sweep.archive` for what is kept and why nothing is
ever replaced.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphnetz.sweep.archive import restore_records, save_records

ARCHIVE_ROOT = Path("results")
SWEEP_ROOT = Path("outputs/multirun")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphnetz records", description=__doc__)
    sub = parser.add_subparsers(dest="action", required=True)
    save = sub.add_parser("save", help="archive a sweep folder's finished records")
    save.add_argument("sweep", type=Path)
    save.add_argument("archive", type=Path, nargs="?", help=f"default: {ARCHIVE_ROOT}/<name>")
    restore = sub.add_parser("restore", help="write archived records back into a sweep folder")
    restore.add_argument("archive", type=Path, nargs="?")
    restore.add_argument("sweep", type=Path, nargs="?", help=f"default: {SWEEP_ROOT}/<name>")
    restore.add_argument(
        "--all", action="store_true", help=f"restore every archive under {ARCHIVE_ROOT}/"
    )
    args = parser.parse_args(argv)

    if args.action == "save":
        pairs = [(args.sweep, args.archive or ARCHIVE_ROOT / args.sweep.resolve().name)]
    elif args.all:
        if args.archive is not None or args.sweep is not None:
            parser.error("--all takes no folders: it restores every archive under results/")
        pairs = [(a, SWEEP_ROOT / a.name) for a in sorted(ARCHIVE_ROOT.iterdir()) if a.is_dir()]
    elif args.archive is None:
        parser.error("restore needs an archive folder (or --all)")
    else:
        pairs = [(args.archive, args.sweep or SWEEP_ROOT / args.archive.resolve().name)]

    conflicts = 0
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
    return 1 if conflicts else 0
