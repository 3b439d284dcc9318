"""Shared cell logic of the tables: best model per task and CI overlap with the best, the
formats of numbers, and Markdown tables and image links."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from graphnetz.stats import settled


def mark_best(summary: pd.DataFrame) -> pd.DataFrame:
    """Add ``best`` (best mean of its task, by direction; ties all best) and ``overlaps_best``
    (CI intersects the best's CI; False when either CI is undefined) to a summary frame."""
    out = summary.copy()
    out["best"] = False
    out["overlaps_best"] = False
    for _, group in out.groupby("task", sort=False):
        higher = group["direction"].iloc[0] == "max"
        target = group["mean"].max() if higher else group["mean"].min()
        best = group.index[settled(group["mean"]) == settled([target])[0]]  # ties: rank_models
        out.loc[best, "best"] = True
        b = out.loc[best[0]]
        for i in group.index.difference(best):
            r = out.loc[i]
            if all(map(math.isfinite, (r["low"], r["high"], b["low"], b["high"]))):
                out.loc[i, "overlaps_best"] = bool(r["low"] <= b["high"] and b["low"] <= r["high"])
    return out


def num(x: float, digits: int = 4) -> str:
    """Fixed-point number, or "n/a" when undefined (NaN)."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def pval(p: float) -> str:
    """p-value with 3 significant digits, "n/a" when untestable."""
    if p is None or not math.isfinite(p):
        return "n/a"
    return f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}"


def slug(name: str) -> str:
    """File-name-safe form of a task name: ``cora/node_cls`` -> ``cora_node_cls``."""
    return "".join(c if c.isalnum() or c in "-." else "_" for c in name).strip("_") or "task"


def md_table(header: list[str], rows: list[list]) -> list[str]:
    """A Markdown table (``|`` in cells escaped) followed by a blank line."""
    out = [
        "| " + " | ".join(h.replace("|", "\\|") for h in header) + " |",
        "|" + "---|" * len(header),
    ]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return out + [""]


def task_slugs(tasks) -> dict[str, str]:
    """Each task's :func:`slug`, made unique: ``cora/node_cls`` and ``cora node_cls`` share a
    slug, so the second becomes ``cora_node_cls-2`` (one task's figure never replaces
    another's)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for task in dict.fromkeys(tasks):
        base = candidate = slug(task)
        n = 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        out[task] = candidate
        taken.add(candidate)
    return out


@dataclass(frozen=True)
class FigureLinks:
    """Where the report's figures are (relative to report.md) and which were drawn."""

    folder: str
    drawn: frozenset[str]


def md_image(figures: FigureLinks | str | None, name: str, alt: str) -> list[str]:
    """The link to ``figures/name.png``: nothing when the report has no figures or when
    this one was not drawn (a folder given as text links every figure)."""
    if not figures:
        return []
    if isinstance(figures, FigureLinks):
        if name not in figures.drawn:
            return []
        figures = figures.folder
    return [f"![{alt}]({figures}/{name}.png)", ""]
