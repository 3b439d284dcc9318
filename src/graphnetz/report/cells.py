"""Shared cell logic of the tables: best model per task and CI overlap with the best, the
formats of numbers, and Markdown tables and image links."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


#: Name tokens of the scores that lie in [0, 1] (accuracy, AP, AUC, F1, MRR, hits@k).
UNIT_SCORE_TOKENS = ("accuracy", "acc", "ap", "auc", "auroc", "f1", "precision", "recall")
UNIT_SCORE_TOKENS += ("mrr", "hits")
#: Name tokens of the errors that lie in [0, inf) (a loss may be negative: not assumed).
NONNEGATIVE_TOKENS = ("mae", "mse", "rmse", "error")


def metric_range(metric: str) -> tuple[float, float] | None:
    """The values a metric can take, read from its name: [0, 1] for a score named by
    :data:`UNIT_SCORE_TOKENS`, [0, inf) for an error (:data:`NONNEGATIVE_TOKENS`); None
    for any other name (nothing is assumed)."""
    tokens = set(re.split(r"[^a-z0-9]+", str(metric).lower()))
    if tokens & set(UNIT_SCORE_TOKENS):
        return (0.0, 1.0)
    if tokens & set(NONNEGATIVE_TOKENS):
        return (0.0, math.inf)
    return None


def interval_caveat(row: Mapping[str, Any]) -> str | None:
    """What a summary row's CI does not say: "beyond" when [low, high] reaches past the
    metric's range (:func:`metric_range`), "zero" when it has zero width over two or more
    seeds (every seed gave the same value); else None. The interval itself is unchanged."""
    low, high = row["low"], row["high"]
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if row["n"] >= 2 and row["half_width"] == 0:
        return "zero"
    bounds = metric_range(row["metric"])
    eps = 1e-12  # a bound off by rounding only is not beyond the range
    if bounds and (low < bounds[0] - eps or high > bounds[1] + eps):
        return "beyond"
    return None


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
