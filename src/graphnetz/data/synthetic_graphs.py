"""Seed-aware synthetic graph-regression data: count the triangles of random graphs.

Each graph is an Erdős–Rényi or a Watts–Strogatz graph of 10-30 nodes with varied density;
the target is its number of triangles divided by the number of nodes (a quantity no
node-feature-only model can compute: it needs the graph). Node features are explicit and
local: ``[1, degree / 10]`` (constant + scaled degree). The loader takes ``seed`` so a
sweep resamples the data per seed (a seed is one draw of data and initialisation).
"""

from __future__ import annotations

import os

import networkx as nx
import numpy as np
import torch
from torch_geometric.data import Data

FEATURE_RULE = "constant 1 and degree/10 per node"


def triangles_per_node(graph: nx.Graph) -> float:
    """Number of triangles of ``graph`` divided by its number of nodes."""
    return sum(nx.triangles(graph).values()) / 3 / graph.number_of_nodes()


def random_graph(rng: np.random.Generator) -> nx.Graph:
    n = int(rng.integers(10, 31))
    seed = int(rng.integers(2**31))
    if rng.random() < 0.5:
        return nx.gnp_random_graph(n, float(rng.uniform(0.1, 0.4)), seed=seed)
    k = int(rng.integers(2, 4)) * 2
    return nx.watts_strogatz_graph(n, k, float(rng.uniform(0.0, 0.5)), seed=seed)


def to_data(graph: nx.Graph) -> Data:
    n = graph.number_of_nodes()
    edges = torch.tensor(list(graph.edges()), dtype=torch.long).view(-1, 2).t()
    edge_index = torch.cat([edges, edges.flip(0)], dim=1)  # both directions
    deg = torch.bincount(edge_index[0], minlength=n).float()
    x = torch.stack([torch.ones_like(deg), deg / 10], dim=1)
    return Data(
        x=x,
        edge_index=edge_index,
        num_nodes=n,
        y=torch.tensor([triangles_per_node(graph)], dtype=torch.float),
    )


def load_triangle_counts(
    root: str | os.PathLike | None = None, mirror=None, *, seed: int, num_graphs: int = 1000
) -> list[Data]:
    """``num_graphs`` random graphs with target triangles/node, resampled per ``seed``."""
    if num_graphs < 10:
        raise ValueError(f"num_graphs must be >= 10 (for an 80/10/10 split), got {num_graphs!r}")
    rng = np.random.default_rng(seed)
    graphs = []
    for _ in range(num_graphs):
        data = to_data(random_graph(rng))
        data.feature_note = FEATURE_RULE
        graphs.append(data)
    return graphs
