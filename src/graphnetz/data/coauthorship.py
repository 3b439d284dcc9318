"""DBLP co-authorship as a plain graph for link prediction (the MLGNC copy, offline).

28 702 authors, an edge per co-authoring pair of ``MLGNC/dblp/dblp.edgelist`` (tab-separated,
0-based). No node features are kept: the multi-label config's structural features are
computed from every edge, test edges included; the config's ``features`` rule builds
them from the training edges instead. This is not the Netzschleuder
``dblp_coauthor`` network (a larger KONECT graph) the reference package downloads.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
from torch_geometric.data import Data

from graphnetz.data.combinatorial import undirected
from graphnetz.data.mirror import resolve_mirror, stage_files, unavailable

DBLP_DIR = "MLGNC/dblp"
DBLP_FILES = ("dblp.edgelist",)
DBLP_AUTHORS = 28_702


def load_dblp_coauthorship(root: str | os.PathLike, mirror=None) -> Data:
    """The co-authorship graph: undirected, self-loops and repeated pairs removed."""
    mirror_path = resolve_mirror(mirror)
    target = Path(root) / DBLP_DIR
    if not stage_files(mirror_path, DBLP_DIR, target, DBLP_FILES, "dblp_coauthorship"):
        raise unavailable("dblp_coauthorship", mirror_path, DBLP_DIR, DBLP_FILES)
    pairs = pd.read_csv(target / "dblp.edgelist", sep="\t", header=None).to_numpy(np.int64)
    n = max(DBLP_AUTHORS, int(pairs.max()) + 1)
    return Data(edge_index=undirected(pairs[:, 0], pairs[:, 1], n), num_nodes=n)
