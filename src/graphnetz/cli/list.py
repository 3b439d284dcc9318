"""``python -m graphnetz list datasets|models|tasks``: what can be benchmarked.

``list datasets`` prints one row per dataset config and task type it serves, with the
task's default epochs and whether the data loads offline here: ``yes (generated)``,
``yes (built in)``, ``yes (data dir)`` (raw files already in ``--data-dir``),
``yes (mirror)`` (in ``--mirror``), ``no (download)`` (fetched on first use where the
network is open), ``no (mirror only)`` (no automatic download: place the raw files in the
mirror or the data dir) or ``no (needs ogb ...)``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pandas as pd

from graphnetz.api.models import list_models
from graphnetz.api.tasks import list_task_types
from graphnetz.cli.help_text import plain
from graphnetz.data.mirror import MIRROR_ENV
from graphnetz.data.registry import catalogue, offline_availability
from graphnetz.launch import absolute_path
from graphnetz.task_types import TASK_TYPES, check_task_type

COLUMNS = ["category", "task_type", "dataset", "config", "epochs", "offline"]


def dataset_table(
    category: str | None = None,
    task: str | None = None,
    data_dir: str | None = None,
    mirror: str | None = None,
) -> pd.DataFrame:
    """The catalogue as rows (category, task type, dataset), optionally filtered."""
    entries = catalogue()
    categories = sorted({e.category for e in entries})
    if category is not None and category not in categories:
        raise ValueError(f"unknown category {category!r}; valid: {categories}")
    if task is not None:
        check_task_type(task)
    rows = []
    for entry in entries:
        if category not in (None, entry.category):
            continue
        served = [t for t in entry.task_types if task in (None, t)]
        if not served:
            continue
        available = str(offline_availability(entry, data_dir, mirror))
        for task_type in served:
            mark = "*" if task_type == entry.natural_task else ""
            rows.append(
                {
                    "category": entry.category,
                    "task_type": task_type + mark,
                    "dataset": entry.name,
                    "config": entry.config,
                    "epochs": entry.epochs.get(task_type, "-"),
                    "offline": available,
                }
            )
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.sort_values(["category", "task_type", "dataset"], kind="stable").reset_index(
        drop=True
    )


def format_datasets(table: pd.DataFrame) -> str:
    if table.empty:
        return "no dataset matches"
    n_yes = sum(v.startswith("yes") for v in table.drop_duplicates("config")["offline"])
    n = table["config"].nunique()
    shown = [c for c in COLUMNS if c != "config"]  # config = dataset name for every entry here
    if (table["config"] != table["dataset"]).any():
        shown.insert(3, "config")
    cells = [shown] + table[shown].astype(str).values.tolist()
    widths = [max(len(row[i]) for row in cells) for i in range(len(shown))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.append(
        f"{n} dataset configs, {n_yes} available offline here; "
        "* = the dataset's natural task (dataset=<config> runs it)"
    )
    return "\n".join(lines)


def model_table(task: str | None = None) -> pd.DataFrame:
    """The models (conf/model YAMLs and registered ones) with the task types each serves;
    with ``task``, only those that declare it (a model that declares none, or cannot be
    imported here, is left out: whether it serves ``task`` is not known)."""
    table = list_models()
    if task is None:
        return table
    check_task_type(task)
    serves = table["task_types"].map(lambda served: task in str(served).split(", "))
    return table[serves].reset_index(drop=True)


def render(
    what: str,
    category: str | None = None,
    task: str | None = None,
    data_dir: str | None = None,
    mirror: str | None = None,
) -> str:
    if what == "datasets":
        return format_datasets(dataset_table(category, task, data_dir, mirror))
    if category is not None:
        raise ValueError(f"--category applies to datasets only, not to {what}")
    if what == "models":
        table = model_table(task)
        return table.to_string(index=False) if not table.empty else f"no model declares {task}"
    if task is not None:
        raise ValueError(f"--task applies to datasets and models only, not to {what}")
    return list_task_types().to_string(index=False)


def _folder(value: str | None) -> str | None:
    return str(absolute_path(value)) if value else None


def _check_folders(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A mirror (given or from the environment) must be a folder, as training requires; a
    data directory must not be a file (one not made yet means nothing is downloaded, said
    in a warning for a ``--data-dir`` given). Fills in the defaults from the environment."""
    source = "--mirror"
    if args.mirror is None:
        args.mirror, source = os.environ.get(MIRROR_ENV) or None, f"${MIRROR_ENV}"
    if args.mirror is not None and not Path(_folder(args.mirror)).is_dir():
        parser.error(f"{source} {args.mirror!r} is not a directory (a data mirror is a folder)")
    if args.data_dir is None:
        args.data_dir = os.environ.get("GRAPHNETZ_DATA_DIR", "data")
        if Path(_folder(args.data_dir)).exists() and not Path(_folder(args.data_dir)).is_dir():
            parser.error(f"$GRAPHNETZ_DATA_DIR {args.data_dir!r} is not a directory")
    elif Path(_folder(args.data_dir)).exists() and not Path(_folder(args.data_dir)).is_dir():
        parser.error(f"--data-dir {args.data_dir!r} is not a directory")
    elif not Path(_folder(args.data_dir)).exists():  # a fresh one: training makes it
        print(
            f"warning: --data-dir {args.data_dir!r} does not exist: nothing is downloaded there",
            file=sys.stderr,
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz list",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("what", choices=["datasets", "models", "tasks"])
    parser.add_argument(
        "--category", default=None, help="datasets only: show one category (e.g. social)"
    )
    parser.add_argument(
        "--task",
        default=None,
        help=f"datasets and models: show one task type ({', '.join(TASK_TYPES)})",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help="datasets only: the data directory to look in (default: paths.data_dir, 'data')",
    )
    parser.add_argument(
        "--mirror",
        default=None,
        help=f"datasets only: the data mirror to look in (default: ${MIRROR_ENV})",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """``argv``: the arguments after ``list`` (a leading ``list``, as the whole command line
    after ``python -m graphnetz`` has it, is dropped)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["list"]:
        argv = argv[1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.what == "datasets":
        _check_folders(parser, args)
    try:
        text = render(
            args.what, args.category, args.task, _folder(args.data_dir), _folder(args.mirror)
        )
    except ValueError as err:  # e.g. an unknown category: say what is valid, no traceback
        parser.exit(2, f"error: {err}\n")
    print(text)
