"""Graph-level benchmark datasets: TUDataset (MUTAG, PROTEINS, ENZYMES).

ZINC and the other graph-level sets load through :func:`graphnetz.data.pyg.load_pyg_dataset`.

Same pattern as ``pyg.py``: raw files are staged from the read-only mirror into ``root``
(``<root>/TUDataset/<NAME>/raw``), torch_geometric processes them there and never downloads.
"""

from __future__ import annotations

import os
from pathlib import Path

from graphnetz.data.mirror import build_from_mirror

TU_NAMES = ("MUTAG", "PROTEINS", "ENZYMES")
# The files torch_geometric's TUDataset reads when present (A and graph_indicator are required).
TU_FILES = {
    "MUTAG": ("A", "graph_indicator", "graph_labels", "node_labels", "edge_labels"),
    "PROTEINS": ("A", "graph_indicator", "graph_labels", "node_labels", "node_attributes"),
    "ENZYMES": ("A", "graph_indicator", "graph_labels", "node_labels", "node_attributes"),
}


def tu_raw_files(name: str) -> list[str]:
    return [f"{name}_{part}.txt" for part in TU_FILES[name]]


def load_tudataset(root: str | os.PathLike, mirror=None, *, name: str, use_node_attr: bool = False):
    """A TUDataset (a list of graphs with ``x``, ``edge_index`` and a graph label ``y``)."""
    from torch_geometric.datasets import TUDataset

    if name not in TU_NAMES:
        raise ValueError(f"unknown TUDataset {name!r}; valid: {list(TU_NAMES)}")
    base = Path(root) / "TUDataset"
    return build_from_mirror(
        name,
        mirror,
        f"TUDataset/{name}/raw",
        base / name / "raw",
        tu_raw_files(name),
        lambda: TUDataset(str(base), name, use_node_attr=use_node_attr),
    )
