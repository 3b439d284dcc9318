"""Multi-label dataset analysis: label homophily, CCNS, statistics table and figures.

Pure functions (arrays in, numbers out) live in :mod:`.homophily` and :mod:`.statistics`;
:func:`analyse_dataset` is the I/O edge used by the CLI
(``python -m graphnetz.analysis dataset=<name>``) and by sweep reports.
"""

from importlib import import_module
from typing import Any

#: Where each public name lives. Loaded on first use (PEP 562), so a training process that
#: needs only the statistics (training/facts.py) does not import matplotlib and pandas.
_HOMES = {
    "ccns_heatmap": "figures",
    "label_count_histogram": "figures",
    "EMPTY_JACCARD": "homophily",
    "edge_jaccard": "homophily",
    "label_homophily": "homophily",
    "multilabel_ccns": "homophily",
    "neighbour_label_counts": "homophily",
    "analyse_dataset": "report",
    "statistics_table": "report",
    "table_markdown": "report",
    "STAT_COLUMNS": "statistics",
    "dataset_statistics": "statistics",
    "local_clustering": "statistics",
    "simple_adjacency": "statistics",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "EMPTY_JACCARD",
    "STAT_COLUMNS",
    "analyse_dataset",
    "ccns_heatmap",
    "dataset_statistics",
    "edge_jaccard",
    "label_count_histogram",
    "label_homophily",
    "local_clustering",
    "multilabel_ccns",
    "neighbour_label_counts",
    "simple_adjacency",
    "statistics_table",
    "table_markdown",
]
