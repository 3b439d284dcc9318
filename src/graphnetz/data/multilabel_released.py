"""The multi-label datasets' edge lists exactly as released (for the study's statistics).

The loaders of :mod:`graphnetz.data.multilabel` build a simple undirected graph (each
pair once per direction, self-loops and repeated rows dropped), which is what models
train on. The multi-label study computed its dataset statistics on the files as
released instead: every row counts, self-loops and repeated pairs included. This module
reads those rows, one ``[R, 2]`` array per dataset, so both conventions can be reported.

What "as released" means per file:

* CSV / tab-separated edge lists (PCG ``edges_undir.csv``, HumLoc/EukLoc
  ``edge_list.csv``, DBLP ``dblp.edgelist``): every row, in file order.
* BlogCatalog's ``network`` matrix stores each undirected pair twice (it is symmetric);
  its released edge list is the stored entries with row ≤ column.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .multilabel import _stage


def _csv_rows(folder: Path, name: str, **read) -> np.ndarray:
    return pd.read_csv(folder / name, **read).to_numpy(np.float64).round().astype(np.int64)


def _pcg(root, mirror) -> np.ndarray:
    folder = _stage("pcg", root, mirror, "MLGNC/pcg_removed_isolated_nodes", ["edges_undir.csv"])
    return _csv_rows(folder, "edges_undir.csv", header=None)


def _go(name: str, folder_name: str) -> Callable[..., np.ndarray]:
    def read(root, mirror) -> np.ndarray:
        folder = _stage(name, root, mirror, f"MLGNC/{folder_name}", ["edge_list.csv"])
        return _csv_rows(folder, "edge_list.csv", usecols=["prot1", "prot2"])

    return read


def _blogcatalog(root, mirror) -> np.ndarray:
    from scipy.io import loadmat

    folder = _stage("blogcatalog", root, mirror, "MLGNC", ["blogcatalog.mat"])
    adj = loadmat(folder / "blogcatalog.mat")["network"].tocoo()
    upper = adj.row <= adj.col
    return np.stack([adj.row[upper], adj.col[upper]], 1).astype(np.int64)


def _dblp(root, mirror) -> np.ndarray:
    folder = _stage("dblp", root, mirror, "MLGNC/dblp", ["dblp.edgelist"])
    return _csv_rows(folder, "dblp.edgelist", sep="\t", header=None)


READERS: dict[str, Callable[..., np.ndarray]] = {
    "pcg": _pcg,
    "humloc": _go("humloc", "HumanGo"),
    "eukloc": _go("eukloc", "EukaryoteGo"),
    "blogcatalog": _blogcatalog,
    "dblp": _dblp,
}


def released_edges(name: str, root, mirror=None) -> np.ndarray:
    """The ``[R, 2]`` node-id rows of dataset ``name``'s edge file, as released."""
    if name not in READERS:
        raise ValueError(
            f"no released edge list is known for dataset {name!r}; "
            f"edges=as_released is available for {sorted(READERS)}"
        )
    return READERS[name](root, mirror)
