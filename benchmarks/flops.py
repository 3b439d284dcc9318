"""Arithmetic floor of a full-batch node-encoder epoch: FLOPs counted from the shapes.

An epoch is one training step (forward, backward, optimiser) and one evaluation forward.
The count covers the matrix products only (dense or sparse-dense linear maps, neighbour
sums); element-wise work (activations, dropout, softmax, Adam) is left out, so the floor is
a lower bound. Backward costs about twice the forward (input and weight gradients), except
the first layer, which needs no input gradient. Dividing by the machine's measured dense
matrix-product rate (:func:`gemm_rate`) turns the count into seconds.
"""

from __future__ import annotations

import time

import torch

#: Linear maps of one layer's input, per model: GCN 1, SAGE 2 (neighbours, root), GT 4
#: (query, key, value, skip), GAT 1, MLP 1.
LINEAR_MAPS = {"gcn": 1, "sage": 2, "gt": 4, "gat": 1, "mlp": 1}


def epoch_flops(model: str, nodes: int, edges: int, in_nnz: int, dims: list[int]) -> float:
    """FLOPs of one epoch of ``model`` with layer widths ``dims`` (input first).

    ``in_nnz`` is the number of stored input entries (``nodes * dims[0]`` when dense): the
    first layer's linear map costs ``2 * in_nnz * width`` either way.
    """
    if model not in LINEAR_MAPS:
        raise ValueError(f"no FLOP model for {model!r}; valid: {sorted(LINEAR_MAPS)}")
    maps = LINEAR_MAPS[model]
    forward = backward = 0.0
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        entries = in_nnz if i == 0 else nodes * d_in
        linear = 2.0 * entries * d_out * maps
        aggregate = 0.0 if model == "mlp" else 2.0 * (edges + nodes) * d_out
        forward += linear + aggregate
        backward += linear * (1 if i == 0 else 2) + 2 * aggregate
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
