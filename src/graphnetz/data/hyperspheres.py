"""The multi-label study's own Synthetic1 points (``MLGNC/Hyperspheres_10_10_0``), edges drawn.

The study released the hypersphere points (3000 nodes; 10 relevant + 10 irrelevant
features; 20 labels) but not their edge file (over 4 MiB). This loader reads the released
points and labels and draws the edges with the same social-distance rule as the
generator (:func:`graphnetz.data.ml_synthetic.social_distance_edges`) at the published
α = 8.8, b = 0.12 (the folder's ``info.txt``), from the run seed: the study's graph family
runs offline, and the seed resamples its edges (about 1.0 M edges, homophily ≈ 0.377).
Splits: the shipped ``Hyperspheres_10_10_0_0.6/split_{0,1,2}.pt``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch_geometric.data import Data

from .ml_synthetic import social_distance_edges
from .multilabel import _mlgnc_splits, _read_matrix, _stage, undirected_edge_index

FOLDER = "MLGNC/Hyperspheres_10_10_0"
RAW_FILES = ("features.csv", "labels.csv")


def load_hyperspheres(
    root: str, mirror=None, *, seed: int, alpha: float = 8.8, b: float = 0.12
) -> Data:
    """Released Synthetic1 points and labels with seeded social-distance edges (α, b)."""
    folder = _stage("hyperspheres_10_10_0", root, mirror, FOLDER, RAW_FILES)
    x = _read_matrix(folder / "features.csv", header=0)
    y = _read_matrix(folder / "labels.csv", header=0)
    n = int(y.shape[0])
    pairs = social_distance_edges(y.numpy() > 0.5, alpha, b, np.random.default_rng(seed))
    masks, split_note = _mlgnc_splits(
        "hyperspheres_10_10_0", root, mirror, FOLDER + "_0.6", n, split_seed=seed
    )
    return Data(
        x=x,
        edge_index=undirected_edge_index(pairs[0], pairs[1], n),
        y=y,
        feature_note="given: 10 relevant hypersphere coordinates + 10 irrelevant (released)",
        split_note=split_note,
        num_nodes=n,
        **{k: torch.as_tensor(v) for k, v in masks.items()},
    )
