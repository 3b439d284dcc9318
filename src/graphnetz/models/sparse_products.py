"""Sparse products whose edge weights change every step (GCN-LPA's learnable edges, GAT's
attention): sorted CSR layouts built once per graph, with exact gradients for both the
weights and the features."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from graphnetz.identity_memo import IdentityMemo

#: Floats gathered per block by the edge-weight gradient: two blocks of rows stay in
#: cache (BlogCatalog, width 256: 2 048 edges a block; 10x faster than 64 k-edge blocks).
GATHER_BLOCK = 1 << 19

#: The edge-weight gradient of a dense graph comes from dense products of row blocks
#: (gradient rows x all feature rows) instead of per-edge gathers: on graphs of at least
#: DENSE_MIN_NODES nodes with an edge for at least DENSE_MIN_DENSITY of the node pairs,
#: for rows at least DENSE_MIN_WIDTH wide (one-wide rows gather as fast). A block holds
#: about DENSE_BLOCK_FLOATS products per group. Synthetic1 (3 000 nodes, 2.1 M edges), a
#: call after the first (which builds the index): width 256 0.61 s -> 0.065 s; GAT's 8
#: heads x 32: 0.80 s -> 0.26 s; GCN-LPA's 20 labels 50 -> 11 ms; width 2 25 -> 10 ms,
#: width 1 19 -> 10 ms (1 200 nodes at 8 % density: width 1 0.5 -> 0.6 ms, 2 1.0 -> 0.6).
DENSE_MIN_NODES = 1024
DENSE_MIN_DENSITY = 1 / 16
DENSE_MIN_WIDTH = 2
DENSE_BLOCK_FLOATS = 1 << 20
INT32_MAX = 2**31 - 1


def _edge_dot(src: Tensor, dst: Tensor, grad: Tensor, h: Tensor) -> Tensor:
    """<grad[dst_e], h[src_e]> per edge, gathered in cache-sized blocks of edges.

    Edges should come sorted by ``dst`` so consecutive edges reuse the rows of ``grad``.
    """
    out = torch.empty(src.numel(), dtype=h.dtype, device=h.device)
    step = max(64, GATHER_BLOCK // max(h.size(-1), 1))
    for start in range(0, src.numel(), step):
        s, d = src[start : start + step], dst[start : start + step]
        out[start : start + step] = (grad.index_select(0, d) * h.index_select(0, s)).sum(-1)
    return out


class _WeightedSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, layout: WeightedAdjacency, coef: Tensor, h: Tensor) -> Tensor:
        ctx.layout = layout
        ctx.save_for_backward(coef, h)
        return layout.spmm(coef, h, transpose=False)

    @staticmethod
    def backward(ctx, grad: Tensor):
        coef, h = ctx.saved_tensors
        layout = ctx.layout
        grad_coef = grad_h = None
        if ctx.needs_input_grad[1]:
            grad_coef = layout.edge_dot(grad, h)
        if ctx.needs_input_grad[2]:
            grad_h = layout.spmm(coef, grad, transpose=True)
        return None, grad_coef, grad_h


class _DenseRowBlocks:
    """Where each edge's dot product lies in dense products of row blocks, for the edges
    of a :class:`WeightedAdjacency` in its target-sorted order. Rows are ``node * groups +
    k`` and edges join rows of one group ``k`` (GAT's heads); a block holds ``rows``
    target nodes of every group, ``[groups, rows, nodes]``."""

    def __init__(self, dst_rows: Tensor, src_rows: Tensor, nodes: int, groups: int) -> None:
        self.nodes, self.groups = nodes, groups
        # the block's size depends on the graph only, so a group's products do not
        # depend on how many groups run beside it (stacked seeds are more heads)
        self.rows = max(1, min(nodes, DENSE_BLOCK_FLOATS // nodes))
        dst, head = dst_rows // groups, dst_rows % groups
        self.index = (head * self.rows + dst % self.rows) * nodes + src_rows // groups
        starts = torch.arange(0, nodes + self.rows, self.rows, device=dst_rows.device)
        self.bounds = torch.searchsorted(dst_rows, starts.clamp(max=nodes) * groups).tolist()

    def edge_dot(self, grad: Tensor, h: Tensor) -> Tensor:
        nodes, groups, rows = self.nodes, self.groups, self.rows
        # each group's operands contiguous, so its products are the same whatever groups
        # run beside it (BLAS may round a strided one-row product differently)
        g = grad.detach().reshape(nodes, groups, -1)  # mm(out=...) records no graph
        feats = h.detach().reshape(nodes, groups, -1).permute(1, 2, 0).contiguous()
        block = h.new_empty(groups, rows, nodes)
        out = h.new_empty(self.index.numel())
        for i, first in enumerate(range(0, nodes, rows)):
            last = min(first + rows, nodes)
            rows_of = g[first:last].transpose(0, 1).contiguous()
            for k in range(groups):
                torch.mm(rows_of[k], feats[k], out=block[k, : last - first])
            lo, hi = self.bounds[i], self.bounds[i + 1]
            out[lo:hi] = block.view(-1)[self.index[lo:hi]]
        return out


class WeightedAdjacency:
    """``(coef, h) -> out`` with out[j] = Σ_{i -> j} coef_ij h[i], for a fixed edge set
    whose weights change every step (GCN-LPA's learnable edges).

    The CSR layouts of the matrix and of its transpose are sorted once; each product
    only permutes the weights into them, and the weight gradient is one blocked
    per-edge dot product, or on a dense graph dense products of row blocks (see
    ``DENSE_MIN_DENSITY``). Same values as :func:`propagate`, up to float rounding.
    ``groups``: the rows are ``node * groups + k`` and every edge stays in its group
    ``k`` (GAT's heads); it only decides whether the graph counts as dense.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, groups: int = 1) -> None:
        self.src, self.dst = edge_index
        self.num_nodes = num_nodes
        self.groups = groups
        self._by_dst = self._layout(self.dst, self.src)
        self._dst_sorted = self.dst[self._by_dst[2]]
        self._by_src = self._layout(self.src, self.dst)
        nodes, edges = num_nodes // groups, self.src.numel() // groups
        self._dense_graph = nodes >= DENSE_MIN_NODES and edges >= DENSE_MIN_DENSITY * nodes**2
        self._row_blocks: _DenseRowBlocks | None = None

    def _layout(self, rows: Tensor, cols: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``(crow, col, order)``: the CSR indices, as 32-bit integers where they fit (the
        sparse product converts 64-bit ones at every call: a sixth of a GAT product on
        Synthetic1; the same sums), and the permutation of the edges into them."""
        order = torch.argsort(rows * self.num_nodes + cols)
        counts = torch.bincount(rows, minlength=self.num_nodes)
        fits = max(cols.numel(), self.num_nodes) < INT32_MAX
        index = torch.int32 if fits else torch.long
        crow = torch.zeros(self.num_nodes + 1, dtype=index, device=rows.device)
        crow[1:] = torch.cumsum(counts, 0)
        return crow, cols[order].to(index), order

    def spmm(self, coef: Tensor, h: Tensor, transpose: bool) -> Tensor:
        crow, col, order = self._by_src if transpose else self._by_dst
        size = (self.num_nodes, self.num_nodes)
        with warnings.catch_warnings():  # torch flags sparse CSR support as beta
            warnings.simplefilter("ignore", UserWarning)
            values = coef.detach().index_select(0, order)  # coef[order], faster
            matrix = torch.sparse_csr_tensor(crow, col, values, size, check_invariants=False)
            return torch.sparse.mm(matrix, h)

    def edge_dot(self, grad: Tensor, h: Tensor) -> Tensor:
        """<grad[j], h[i]> for every edge i -> j, in the caller's edge order."""
        _, col, order = self._by_dst
        out = h.new_empty(order.numel())
        if self._dense_graph and h.size(-1) >= DENSE_MIN_WIDTH:
            if self._row_blocks is None:  # built at the first backward that needs it
                nodes = self.num_nodes // self.groups
                self._row_blocks = _DenseRowBlocks(self._dst_sorted, col, nodes, self.groups)
            values = self._row_blocks.edge_dot(grad, h)
        else:
            values = _edge_dot(col, self._dst_sorted, grad, h)
        return out.index_copy_(0, order, values)  # out[order] = values, faster

    def __call__(self, coef: Tensor, h: Tensor) -> Tensor:
        return _WeightedSpMM.apply(self, coef, h)


class _Transposes:
    """A fixed sparse matrix -> its transpose in CSR, built at the first backward pass that
    needs it and kept as long as the matrix lives (``Aᵀ`` exactly as torch's own backward
    of ``torch.sparse.mm`` converts it, so gradients stay bit for bit the same)."""

    def __init__(self) -> None:
        self._memo = IdentityMemo()

    def __call__(self, matrix: Tensor) -> Tensor:
        transposed = self._memo.get(matrix)
        if transposed is None:
            with warnings.catch_warnings():  # torch flags sparse CSR support as beta
                warnings.simplefilter("ignore", UserWarning)
                transposed = matrix.t().to_sparse_csr()
            self._memo.put(matrix, transposed)
        return transposed


_TRANSPOSES = _Transposes()


class _FixedMatrixProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, matrix: Tensor, h: Tensor) -> Tensor:
        ctx.matrix = matrix
        return torch.sparse.mm(matrix, h)

    @staticmethod
    def backward(ctx, grad: Tensor):
        return None, torch.mm(_TRANSPOSES(ctx.matrix), grad)


def fixed_matrix_product(matrix: Tensor, h: Tensor) -> Tensor:
    """``torch.sparse.mm(matrix, h)`` for a CSR matrix that stays the same across steps
    (a normalised adjacency): same values and gradients, but the transpose that the
    gradient of ``h`` needs is converted once per matrix, not in every backward pass
    (on a graph of 2 M edges that conversion was three quarters of a GCN step)."""
    if matrix.layout != torch.sparse_csr or matrix.requires_grad or not h.requires_grad:
        return torch.sparse.mm(matrix, h)
    return _FixedMatrixProduct.apply(matrix, h)
