"""Multi-label dataset analysis: label homophily, CCNS, statistics table and figures.

Pure functions (arrays in, numbers out) live in :mod:`.homophily` and :mod:`.statistics`;
:func:`analyse_dataset` is the I/O edge used by the CLI
(``python -m graphnetz.analysis dataset=<name>``) and by sweep reports.
"""

from .figures import ccns_heatmap, label_count_histogram
from .homophily import (
    EMPTY_JACCARD,
    edge_jaccard,
    label_homophily,
    multilabel_ccns,
    neighbour_label_counts,
)
from .report import analyse_dataset, statistics_table, table_markdown
from .statistics import STAT_COLUMNS, dataset_statistics, local_clustering, simple_adjacency

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
