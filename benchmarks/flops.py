"""Arithmetic floor of a full-batch node-encoder epoch: FLOPs counted from the shapes.

An epoch is one training step (forward, backward, optimiser) and one evaluation forward.
The count covers the products only, a multiply-add counting 2: dense or sparse-dense
linear maps, neighbour aggregations (one multiply-add per aggregated edge and channel)
and the Graph Transformer's per-edge query-key products; element-wise work (activations,
dropout, softmax, normalisation, attention scores of GAT, Adam) is left out, so the floor
is a lower bound. In the backward pass a linear map costs twice its forward (input and
weight gradients) except in the first layer, which needs no input gradient; an
aggregation with fixed weights (GCN's normalised adjacency, SAGE's mean) only passes the
gradient back to its input (once its forward), one with learned attention weights also
forms their gradient (twice). Dividing by the machine's measured dense matrix-product
rate (:func:`gemm_rate`) turns the count into seconds.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import torch


class Counted(NamedTuple):
    """What a layer of a model counts, besides its aggregation's edges."""

    #: linear maps of the layer's input
    maps: int
    #: the aggregation also sums one self-loop per node (edges + nodes terms)
    self_loops: bool
    #: attention weights, learned: the aggregation's backward also forms their gradient
    attention: bool
    #: per-edge query-key dot products (one multiply-add per edge and channel)
    edge_scores: bool


#: Per model: GCN one map, aggregation over the normalised adjacency with self-loops
#: (fixed weights); SAGE two maps (neighbours, root), the mean over the neighbours (no
#: self-loops, fixed weights); GAT one map, attention over the neighbours and self-loops;
#: GT four maps (query, key, value, skip), attention over the neighbours (no self-loops:
#: the skip map stands for the node itself) with a query-key product per edge; MLP one
#: map, no aggregation.
MODELS = {
    "gcn": Counted(maps=1, self_loops=True, attention=False, edge_scores=False),
    "sage": Counted(maps=2, self_loops=False, attention=False, edge_scores=False),
    "gat": Counted(maps=1, self_loops=True, attention=True, edge_scores=False),
    "gt": Counted(maps=4, self_loops=False, attention=True, edge_scores=True),
    "mlp": Counted(maps=1, self_loops=False, attention=False, edge_scores=False),
}


def epoch_flops(model: str, nodes: int, edges: int, in_nnz: int, dims: list[int]) -> float:
    """FLOPs of one epoch of ``model`` with layer widths ``dims`` (input first).

    ``edges`` counts directed edges (each undirected pair twice), without self-loops.
    ``in_nnz`` is the number of stored input entries (``nodes * dims[0]`` when dense): the
    first layer's linear map costs ``2 * in_nnz * width`` either way. Per layer of output
    width ``d``, with ``A`` the aggregated entries (``edges``, plus ``nodes`` with
    self-loops)::

        forward  = linear + 2 A d + [GT] 2 edges d
        backward = linear x (1 first layer, else 2) + 2 A d x (2 attention, else 1)
                   + [GT] 2 x 2 edges d

    and the epoch is ``2 x forward + backward`` (training and evaluation forwards).
    """
    if model not in MODELS:
        raise ValueError(f"no FLOP model for {model!r}; valid: {sorted(MODELS)}")
    counted = MODELS[model]
    aggregated = 0 if model == "mlp" else edges + (nodes if counted.self_loops else 0)
    forward = backward = 0.0
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        entries = in_nnz if i == 0 else nodes * d_in
        linear = 2.0 * entries * d_out * counted.maps
        aggregate = 2.0 * aggregated * d_out
        scores = 2.0 * edges * d_out if counted.edge_scores else 0.0
        forward += linear + aggregate + scores
        backward += linear * (1 if i == 0 else 2)
        backward += aggregate * (2 if counted.attention else 1) + 2 * scores
    return 2 * forward + backward  # training forward + evaluation forward + backward


def gemm_rate(size: int = 512, repeats: int = 5) -> float:
    """Dense float32 matrix-product FLOP/s of this process (best of ``repeats``)."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 / best
