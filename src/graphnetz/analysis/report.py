"""I/O edge of the analysis: write a dataset's statistics row and figures to a folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .figures import ccns_heatmap, label_count_histogram
from .homophily import _as_numpy, multilabel_ccns
from .statistics import STAT_COLUMNS, dataset_statistics, simple_adjacency


def statistics_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows from :func:`dataset_statistics` as a table with the canonical column order."""
    return pd.DataFrame(rows, columns=list(STAT_COLUMNS))


def table_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (floats to 3 decimals), no extra dependency."""

    def cell(v: Any) -> str:
        return f"{v:.3f}" if isinstance(v, float | np.floating) else str(v)

    head = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(False)]
    return "\n".join([head, rule, *body]) + "\n"


def _save(fig, stem: Path) -> list[Path]:
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in paths:
        fig.savefig(p, dpi=150)
    return paths


def analyse_dataset(
    data: Any, name: str, out_dir: str | os.PathLike, released_edges: np.ndarray | None = None
) -> dict[str, Any]:
    """Compute the statistics row and CCNS of ``data`` and write them to ``out_dir``.

    Writes ``statistics.csv``, ``statistics.md``, ``ccns.csv``, ``label_counts.{png,pdf}``
    and ``ccns.{png,pdf}``; returns the statistics row (a dict, see ``STAT_COLUMNS``)
    so a sweep report can collect one row per dataset. ``released_edges`` switches the
    edge columns to the edge file as released (see :func:`dataset_statistics`); CCNS and
    the figures always use the simple graph.
    """
    row = dataset_statistics(data, name, released_edges)  # refuses single-label data
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = statistics_table([row])
    table.insert(1, "edges_convention", "simple" if released_edges is None else "as_released")
    table.to_csv(out / "statistics.csv", index=False)
    (out / "statistics.md").write_text(table_markdown(table))
    simple = simple_adjacency(data.edge_index, int(_as_numpy(data.y).shape[0])).tocoo()
    ccns = multilabel_ccns(np.stack([simple.row, simple.col]), data.y)  # both directions
    np.savetxt(out / "ccns.csv", ccns, delimiter=",", fmt="%.6g")
    _save(label_count_histogram(_as_numpy(data.y), name), out / "label_counts")
    _save(ccns_heatmap(ccns, name), out / "ccns")
    return row
