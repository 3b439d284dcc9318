"""Small graph operators shared by the multi-label baselines (pure torch)."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor


def simple_edges(edge_index: Tensor, num_nodes: int) -> Tensor:
    """``edge_index`` without self-loops and duplicate edges, sorted by (source, target)."""
    src, dst = edge_index
    keep = src != dst
    key = torch.unique(src[keep] * num_nodes + dst[keep])
    return torch.stack([key // num_nodes, key % num_nodes])


def normalize(
    edge_index: Tensor, num_nodes: int, weight: Tensor | None = None, mode: str = "sym"
) -> Tensor:
    """Edge coefficients of D^-1/2 A D^-1/2 (``"sym"``) or D^-1 A (``"row"``, by target).

    Degrees are weighted in-degrees of the targets; isolated nodes get coefficient 0
    instead of a division by zero.
    """
    src, dst = edge_index
    if weight is None:
        weight = torch.ones(src.numel(), device=edge_index.device)
    deg = torch.zeros(num_nodes, device=weight.device, dtype=weight.dtype)
    deg = deg.index_add(0, dst, weight)
    if mode == "sym":
        inv = deg.pow(-0.5).masked_fill(deg <= 0, 0.0)
        return inv[src] * weight * inv[dst]
    if mode == "row":
        inv = deg.reciprocal().masked_fill(deg <= 0, 0.0)
        return weight * inv[dst]
    raise ValueError(f"normalisation mode must be 'sym' or 'row', got {mode!r}")


def propagate(edge_index: Tensor, coef: Tensor, h: Tensor) -> Tensor:
    """out[j] = sum over edges (i -> j) of coef_ij * h[i], by gathering one row per edge.

    The plain reference for :class:`graphnetz.models.sparse_products.WeightedAdjacency`
    (which reuses a sorted layout and is several times faster); kept for tests.
    """
    src, dst = edge_index
    out = torch.zeros_like(h)
    return out.index_add(0, dst, h[src] * coef.unsqueeze(-1))


def _csr(rows: Tensor, cols: Tensor, values: Tensor, shape: tuple[int, int]) -> Tensor:
    coo = torch.sparse_coo_tensor(torch.stack([rows, cols]), values, shape, check_invariants=False)
    with warnings.catch_warnings():  # torch flags sparse CSR support as beta
        warnings.simplefilter("ignore", UserWarning)
        return coo.coalesce().to_sparse_csr()


class _FixedSpMM(torch.autograd.Function):
    """P @ h with the gradient P^T @ g from a transpose built once, not at every backward."""

    @staticmethod
    def forward(ctx, matrix: Tensor, matrix_t: Tensor, h: Tensor) -> Tensor:
        ctx.matrix_t = matrix_t
        return torch.sparse.mm(matrix, h)

    @staticmethod
    def backward(ctx, grad: Tensor):
        return None, None, torch.sparse.mm(ctx.matrix_t, grad)


class FixedOperator:
    """``h -> P @ h`` for a fixed sparse P with P[j, i] = coef_ij: same result as
    :func:`propagate`, without gathering one row of ``h`` per edge.

    For operators reused every step (H2GCN's Â₁, Â₂): the CSR matrix and its transpose
    (for the backward pass) are built once; no gradient flows to ``coef``.
    """

    def __init__(
        self, edge_index: Tensor, coef: Tensor, num_nodes: int, targets: Tensor | None = None
    ) -> None:
        src, dst = edge_index
        coef = coef.detach()
        self._edges = (src, dst, coef)
        self.num_nodes = num_nodes
        num_rows = num_nodes
        if targets is not None:  # keep rows ``targets`` of P only, in that order
            position = torch.full((num_nodes,), -1, dtype=torch.long, device=dst.device)
            position[targets] = torch.arange(targets.numel(), device=dst.device)
            keep = position[dst] >= 0
            src, dst, coef, num_rows = src[keep], position[dst[keep]], coef[keep], targets.numel()
        self.matrix = _csr(dst, src, coef, (num_rows, num_nodes))
        self.matrix_t = _csr(src, dst, coef, (num_nodes, num_rows))

    def __call__(self, h: Tensor) -> Tensor:
        return _FixedSpMM.apply(self.matrix, self.matrix_t, h)

    def rows(self, index: Tensor) -> FixedOperator:
        """The operator ``h -> (P @ h)[index]``, computing only those rows."""
        src, dst, coef = self._edges
        return FixedOperator(torch.stack([src, dst]), coef, self.num_nodes, targets=index)

    def to_dense(self) -> DenseOperator:
        return DenseOperator(self.matrix.to_dense())


class DenseOperator:
    """``h -> P @ h`` for a fixed dense P (a 2-hop set covering most node pairs)."""

    def __init__(self, matrix: Tensor) -> None:
        self.matrix = matrix

    def __call__(self, h: Tensor) -> Tensor:
        return self.matrix @ h

    def rows(self, index: Tensor) -> DenseOperator:
        """The operator ``h -> (P @ h)[index]``, computing only those rows."""
        return DenseOperator(self.matrix[index])
