"""Seed-aware combinatorial instances, one graph per run seed (link prediction on its edges).

Every loader takes ``seed`` (the run seed, so a sweep resamples the instance) and draws
from its own ``numpy.random.Generator``: the same seed gives the same graph on any
machine, and the caller's torch / numpy generators are left untouched. Edges are built
with array operations (no Python loop over node pairs) and returned undirected (both
directions, no self-loops, no duplicates). Each instance also carries the target of its
problem where a polynomial-time solver exists (max-flow value, maximum-weight matching,
a locally optimal cut, a greedy colouring); TSP and VRP are NP-hard and carry none.
``docs/catalogue.md`` lists sizes, features and targets in one table.
"""

from __future__ import annotations

import os

import numpy as np
import torch
from torch_geometric.data import Data

# networkx, scipy.sparse.csgraph and scipy.optimize are imported by the loaders that use
# them: this module is imported by every PyG dataset's adapter (for knn_edges), and those
# imports cost about a second per process.


def _check(name: str, value, low, kind=int) -> None:
    if isinstance(value, bool) or not isinstance(value, kind) or value < low:
        raise ValueError(f"{name} must be a {kind.__name__} >= {low}, got {value!r}")


def _check_prob(name: str, p) -> None:
    if not isinstance(p, int | float) or not 0 < p <= 1:
        raise ValueError(f"{name} must be a probability in (0, 1], got {p!r}")


def undirected(src: np.ndarray, dst: np.ndarray, num_nodes: int) -> torch.Tensor:
    """Both directions of the pairs (src, dst), self-loops and duplicates removed, sorted."""
    keep = src != dst
    lo, hi = np.minimum(src, dst)[keep], np.maximum(src, dst)[keep]
    pairs = np.unique(lo.astype(np.int64) * num_nodes + hi)
    lo, hi = pairs // num_nodes, pairs % num_nodes
    edge_index = np.concatenate([np.stack([lo, hi]), np.stack([hi, lo])], axis=1)
    order = np.lexsort((edge_index[1], edge_index[0]))
    return torch.from_numpy(edge_index[:, order].copy())


def upper_pairs(edge_index: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Each undirected edge once, as (i, j) with i < j."""
    src, dst = edge_index.numpy()
    keep = src < dst
    return src[keep], dst[keep]


def knn_edges(points: np.ndarray, k: int) -> torch.Tensor:
    """The symmetric k-nearest-neighbour graph (i ~ j when either is among the other's k)."""
    dist = ((points[:, None, :] - points[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(dist, np.inf)
    nearest = np.argsort(dist, axis=1, kind="stable")[:, :k]
    n = len(points)
    return undirected(np.repeat(np.arange(n), k), nearest.reshape(-1), n)


def erdos_renyi_pairs(rng: np.random.Generator, n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """G(n, p): each of the n(n-1)/2 pairs independently with probability p (i < j)."""
    i, j = np.triu_indices(n, k=1)
    keep = rng.random(i.size) < p
    return i[keep], j[keep]


# ---------------------------------------------------------------- TSP and VRP (no solver)
def load_tsp(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    num_nodes: int = 200,
    k: int = 4,
) -> Data:
    """Random Euclidean TSP: ``num_nodes`` uniform points in the unit square, the symmetric
    ``k``-NN graph, x = pos = coordinates. No solver target (the task predicts its edges)."""
    _check("num_nodes", num_nodes, 2)
    _check("k", k, 1)
    if k >= num_nodes:
        raise ValueError(f"k must be smaller than num_nodes={num_nodes}, got {k!r}")
    points = np.random.default_rng(seed).random((num_nodes, 2))
    pos = torch.from_numpy(points).float()
    return Data(x=pos, pos=pos, edge_index=knn_edges(points, k), num_nodes=num_nodes)


def load_vrp(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    num_customers: int = 200,
    num_depots: int = 5,
    k: int = 6,
) -> Data:
    """Capacitated VRP: depots (nodes 0..num_depots-1, demand 0) and customers (demand
    U(0, 1]) uniform in the unit square, the symmetric ``k``-NN graph;
    x = [x, y, demand, is_depot]. No solver target."""
    _check("num_customers", num_customers, 1)
    _check("num_depots", num_depots, 1)
    _check("k", k, 1)
    n = num_customers + num_depots
    if k >= n:
        raise ValueError(f"k must be smaller than the {n} nodes, got {k!r}")
    rng = np.random.default_rng(seed)
    points = rng.random((n, 2))
    demand = 1.0 - rng.random(n)  # (0, 1]
    demand[:num_depots] = 0.0
    is_depot = np.zeros(n)
    is_depot[:num_depots] = 1.0
    x = torch.from_numpy(np.column_stack([points, demand, is_depot])).float()
    return Data(x=x, pos=x[:, :2], demand=x[:, 2], edge_index=knn_edges(points, k), num_nodes=n)


# ------------------------------------------------------------- problems with a solver
def load_graph_colouring(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    num_nodes: int = 200,
    edge_prob: float = 0.1,
) -> Data:
    """Random colouring instance: G(num_nodes, edge_prob), no node features. Target: a
    proper colouring by networkx's largest-first greedy rule (``y``, ``num_colours``)."""
    _check("num_nodes", num_nodes, 2)
    _check_prob("edge_prob", edge_prob)
    src, dst = erdos_renyi_pairs(np.random.default_rng(seed), num_nodes, edge_prob)
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(num_nodes))
    graph.add_edges_from(zip(src.tolist(), dst.tolist(), strict=True))
    colours = nx.greedy_color(graph, strategy="largest_first")
    y = torch.tensor([colours[v] for v in range(num_nodes)], dtype=torch.long)
    return Data(
        edge_index=undirected(src, dst, num_nodes),
        num_nodes=num_nodes,
        y=y,
        num_colours=int(y.max()) + 1 if num_nodes else 0,
    )


def load_max_flow(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    num_nodes: int = 100,
    edge_prob: float = 0.05,
    max_capacity: int = 10,
) -> Data:
    """Max-flow instance: a directed G(n, p) with integer capacities U{1..max_capacity},
    source node 0, sink node n-1; x = [is_source, is_sink]. The link task predicts the
    underlying undirected edges; the arcs are ``arc_index`` / ``capacity``. Target: the
    maximum s-t flow value (``flow_value``, scipy's maximum_flow)."""
    _check("num_nodes", num_nodes, 2)
    _check_prob("edge_prob", edge_prob)
    _check("max_capacity", max_capacity, 1)
    rng = np.random.default_rng(seed)
    src, dst = np.nonzero(rng.random((num_nodes, num_nodes)) < edge_prob)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    capacity = rng.integers(1, max_capacity + 1, size=src.size)
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow

    matrix = sp.csr_matrix((capacity.astype(np.int32), (src, dst)), shape=(num_nodes,) * 2)
    flow = maximum_flow(matrix, 0, num_nodes - 1).flow_value
    x = torch.zeros(num_nodes, 2)
    x[0, 0] = 1.0
    x[-1, 1] = 1.0
    return Data(
        x=x,
        edge_index=undirected(src, dst, num_nodes),
        arc_index=torch.from_numpy(np.stack([src, dst]).astype(np.int64)),
        capacity=torch.from_numpy(capacity).float(),
        num_nodes=num_nodes,
        flow_value=float(flow),
    )


def load_bipartite_matching(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    size: int = 100,
    edge_prob: float = 0.05,
) -> Data:
    """Assignment instance: two sides of ``size`` nodes (left 0..size-1), each left-right
    pair an edge with probability ``edge_prob``, weight U(0, 1]; x = one-hot side. Target:
    a maximum-weight matching (``matching`` [2, M] left-right pairs, ``matching_weight``;
    scipy's linear_sum_assignment on the weight matrix, non-edges weigh 0)."""
    _check("size", size, 1)
    _check_prob("edge_prob", edge_prob)
    rng = np.random.default_rng(seed)
    mask = rng.random((size, size)) < edge_prob
    weights = np.where(mask, 1.0 - rng.random((size, size)), 0.0)
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weights, maximize=True)
    matched = mask[rows, cols]
    rows, cols = rows[matched], cols[matched]
    left, right = np.nonzero(mask)
    edge_index = undirected(left, right + size, 2 * size)
    src, dst = edge_index.numpy()
    a, b = np.minimum(src, dst), np.maximum(src, dst) - size
    x = torch.zeros(2 * size, 2)
    x[:size, 0] = 1.0
    x[size:, 1] = 1.0
    return Data(
        x=x,
        edge_index=edge_index,
        edge_weight=torch.from_numpy(weights[a, b]).float(),
        num_nodes=2 * size,
        matching=torch.from_numpy(np.stack([rows, cols + size]).astype(np.int64)),
        matching_weight=float(weights[rows, cols].sum()),
    )


def local_max_cut(weights: np.ndarray, side: np.ndarray) -> np.ndarray:
    """1-flip local search: flip the node whose move gains most until no flip gains.

    Gain of flipping v = (weight to its own side) - (weight to the other side); the cut
    grows strictly at every flip, so the search ends, at a cut no single flip improves.
    """
    side = side.copy()
    signs = np.where(side == 1, 1.0, -1.0)
    while True:
        gain = signs * (weights @ signs)  # own-side minus other-side weight, per node
        best = int(np.argmax(gain))
        if gain[best] <= 1e-12:
            return side
        side[best] = 1 - side[best]
        signs[best] = -signs[best]


def cut_weight(weights: np.ndarray, side: np.ndarray) -> float:
    """Total weight of the edges whose ends lie on different sides."""
    across = side[:, None] != side[None, :]
    return float(weights[across].sum() / 2)


def load_max_cut(
    root: str | os.PathLike | None = None,
    mirror=None,
    *,
    seed: int,
    num_nodes: int = 200,
    edge_prob: float = 0.05,
) -> Data:
    """Weighted max-cut instance: G(num_nodes, edge_prob) with weights U[0, 1), no node
    features. Target: a 1-flip locally optimal cut from a random start (``y`` = side,
    ``cut_value``; see :func:`local_max_cut`)."""
    _check("num_nodes", num_nodes, 2)
    _check_prob("edge_prob", edge_prob)
    rng = np.random.default_rng(seed)
    src, dst = erdos_renyi_pairs(rng, num_nodes, edge_prob)
    weights = np.zeros((num_nodes, num_nodes))
    weights[src, dst] = rng.random(src.size)
    weights = weights + weights.T
    side = local_max_cut(weights, rng.integers(0, 2, num_nodes))
    edge_index = undirected(src, dst, num_nodes)
    return Data(
        edge_index=edge_index,
        edge_weight=torch.from_numpy(weights[edge_index[0], edge_index[1]]).float(),
        num_nodes=num_nodes,
        y=torch.from_numpy(side).long(),
        cut_value=cut_weight(weights, side),
    )
