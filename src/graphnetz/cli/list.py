"""``python -m graphnetz list datasets|models|tasks``: what can be benchmarked."""

from __future__ import annotations

import argparse

import pandas as pd

from graphnetz.api.models import list_models
from graphnetz.api.tasks import list_datasets, list_task_types


def format_datasets(table: pd.DataFrame) -> str:
    """Category -> task type -> datasets, one block per category."""
    lines = []
    for category, group in table.groupby("category", sort=True):
        lines.append(category)
        width = max(len(t) for t in group["task_type"])
        for row in group.itertuples():
            lines.append(f"  {row.task_type:<{width}}  {', '.join(row.datasets)}")
    return "\n".join(lines)


def render(what: str, category: str | None = None) -> str:
    if what == "datasets":
        return format_datasets(list_datasets(category))
    table = list_models() if what == "models" else list_task_types()
    return table.to_string(index=False)


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "list", help="list datasets, models or task types", description=__doc__
    )
    parser.add_argument("what", choices=["datasets", "models", "tasks"])
    parser.add_argument(
        "--category", default=None, help="datasets only: show one category (e.g. social)"
    )
    parser.set_defaults(handler=lambda args: print(render(args.what, args.category)))
    return parser


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m graphnetz")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_parser(subparsers)
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except ValueError as err:  # e.g. an unknown category: say what is valid, no traceback
        parser.exit(2, f"error: {err}\n")
