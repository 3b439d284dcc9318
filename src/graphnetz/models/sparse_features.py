"""Sparse node features for the first layer of an encoder (bag-of-words, one-hot ids).

:class:`SparseRows` keeps a feature matrix in CSR together with the layout of its
transpose, so that the first linear map ``X W^T`` and its weight gradient ``G^T X`` are
two sparse-dense products (about ``2 · nnz · width`` FLOPs each) instead of dense ones
over every cell. Dropout draws one number per stored entry: zeros stay zero either way,
so this has the distribution of dense dropout.

:class:`SparseFeatures` decides, once per feature tensor, whether it is sparse enough.
"""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from graphnetz.identity_memo import IdentityMemo

#: Dense features with at most this share of non-zero entries (Cora's bag-of-words: 1.3 %,
#: CiteSeer's 0.9 %) enter the first layer as :class:`SparseRows`.
SPARSE_MAX_DENSITY = 0.1
#: Below this width the dense kernels win (few columns: nothing to skip).
SPARSE_MIN_COLUMNS = 128


def _csr(crow: Tensor, col: Tensor, values: Tensor, shape) -> Tensor:
    with warnings.catch_warnings():  # torch flags sparse CSR support as beta
        warnings.simplefilter("ignore", UserWarning)
        return torch.sparse_csr_tensor(crow, col, values, shape, check_invariants=False)


def fast_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """Dropout with the distribution of ``F.dropout`` (keep with probability ``1 - p``,
    scale by ``1 / (1 - p)``), drawn as uniform numbers: several times faster on CPU
    than ``F.dropout``'s Bernoulli kernel. Deterministic for a seeded generator."""
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = torch.rand_like(x) >= p
    return x * keep.to(x.dtype).mul_(1.0 / (1.0 - p))


class SparseRows:
    """An ``[N, F]`` sparse feature matrix that a layer multiplies by its weight.

    Not a tensor: layers that know it call :meth:`linear`; others get
    :meth:`to_torch` (a sparse COO tensor, which ``F.linear`` accepts, more slowly).
    """

    def __init__(self, crow, col, values, shape, t_crow, t_col, t_order) -> None:
        self.crow, self.col, self.values = crow, col, values
        self.shape = torch.Size(shape)
        self._t_crow, self._t_col, self._t_order = t_crow, t_col, t_order

    @classmethod
    def from_tensor(cls, x: Tensor) -> SparseRows:
        """From a dense or sparse (COO, CSR) 2-D tensor; stored zeros are kept."""
        if x.layout not in (torch.strided, torch.sparse_coo, torch.sparse_csr):
            raise ValueError(f"SparseRows takes strided, COO or CSR tensors, got {x.layout}")
        with warnings.catch_warnings():  # torch flags sparse CSR support as beta
            warnings.simplefilter("ignore", UserWarning)
            if x.layout == torch.strided:
                x = x.to_sparse_csr()
            elif x.layout == torch.sparse_coo:
                x = x.coalesce().to_sparse_csr()
        crow, col, values = x.crow_indices(), x.col_indices(), x.values()
        n, f = x.shape
        rows = torch.repeat_interleave(torch.arange(n, device=col.device), crow.diff())
        t_order = torch.argsort(col * n + rows)
        t_crow = torch.zeros(f + 1, dtype=crow.dtype, device=crow.device)
        t_crow[1:] = torch.cumsum(torch.bincount(col, minlength=f), 0)
        return cls(crow, col, values, (n, f), t_crow, rows[t_order], t_order)

    # ---- the tensor-like surface layers read ----------------------------------------
    is_sparse = True

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return 2

    @property
    def dtype(self) -> torch.dtype:
        return self.values.dtype

    @property
    def device(self) -> torch.device:
        return self.values.device

    # ---- operations ---------------------------------------------------------------
    def with_values(self, values: Tensor) -> SparseRows:
        return SparseRows(
            self.crow, self.col, values, self.shape, self._t_crow, self._t_col, self._t_order
        )

    def dropout(self, p: float, training: bool) -> SparseRows:
        """Dropout of the stored entries (zeros stay zero, as with dense dropout)."""
        if not training or p == 0.0:
            return self
        return self.with_values(fast_dropout(self.values, p, training))

    def matrix(self) -> Tensor:
        return _csr(self.crow, self.col, self.values, self.shape)

    def transposed(self) -> Tensor:
        shape = (self.shape[1], self.shape[0])
        return _csr(self._t_crow, self._t_col, self.values[self._t_order], shape)

    def linear(self, weight: Tensor, bias: Tensor | None = None) -> Tensor:
        """``X W^T + b`` with gradients for ``weight`` and ``bias`` (not for X)."""
        out = _SparseLinear.apply(self, weight)
        return out if bias is None else out + bias

    def to_torch(self) -> Tensor:
        """The matrix as a sparse COO tensor (for layers that only take tensors)."""
        return self.matrix().to_sparse_coo()

    def to_dense(self) -> Tensor:
        return self.matrix().to_dense()


class _SparseLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, rows: SparseRows, weight: Tensor) -> Tensor:
        ctx.rows = rows
        return torch.sparse.mm(rows.matrix(), weight.t().contiguous())

    @staticmethod
    def backward(ctx, grad: Tensor):
        grad_weight = None
        if ctx.needs_input_grad[1]:
            grad_weight = torch.sparse.mm(ctx.rows.transposed(), grad.contiguous()).t()
        return None, grad_weight


class _Conversions:
    """What each live feature tensor converted to, for every model of the process: a
    sweep's runs share the cached dataset's features, and each run's new model would
    convert them again (Cora: 20 ms a run). Found by identity and version, kept while
    the tensor lives; inference tensors (no version) are not kept."""

    def __init__(self) -> None:
        self._memo = IdentityMemo()

    def get(self, x: Tensor, version: int | None) -> Tensor | SparseRows | None:
        return None if version is None else self._memo.get(x, version)

    def put(self, x: Tensor, version: int | None, value: Tensor | SparseRows) -> None:
        if version is None or value is x:  # x itself would keep x alive: nothing to save
            return
        self._memo.put(x, value, version)

    def __contains__(self, x: Tensor) -> bool:
        return x in self._memo


_CONVERTED = _Conversions()


class SparseFeatures:
    """Node features -> :class:`SparseRows` when they are mostly zeros, else unchanged.

    The conversion runs once per feature tensor (the same full-batch ``x`` every step:
    the very tensor, unmodified since, is recognised without a comparison). Sparse
    tensors always convert; dense ones when at least ``SPARSE_MIN_COLUMNS`` wide and at
    most ``SPARSE_MAX_DENSITY`` non-zero. Features that need a gradient pass unchanged.
    """

    def __init__(self) -> None:
        self._source: Tensor | None = None
        self._version: int | None = None
        self._value: Tensor | SparseRows | None = None

    def get(self, x: Tensor) -> Tensor | SparseRows:
        if not isinstance(x, Tensor) or x.requires_grad or x.dim() != 2:
            return x
        if not x.is_floating_point() and not x.is_sparse:
            return x
        version = None if x.is_inference() else x._version
        if x is self._source and version is not None and version == self._version:
            return self._value
        value = _CONVERTED.get(x, version)
        if value is None:
            with torch.inference_mode(False):  # reused by training steps (see GraphCache)
                value = SparseRows.from_tensor(x) if self._sparse_enough(x) else x
            _CONVERTED.put(x, version, value)
        self._source, self._version, self._value = x, version, value
        return value

    @staticmethod
    def _sparse_enough(x: Tensor) -> bool:
        if x.is_sparse or x.layout == torch.sparse_csr:
            return True
        if x.layout != torch.strided or x.size(1) < SPARSE_MIN_COLUMNS:
            return False
        return int(torch.count_nonzero(x)) <= SPARSE_MAX_DENSITY * x.numel()


def project(layer, x) -> Tensor:
    """``layer(x)`` for a linear layer (``weight``, optional ``bias``) and any input:
    dense, a sparse tensor (``F.linear`` takes COO) or :class:`SparseRows`."""
    if isinstance(x, SparseRows):
        return x.linear(layer.weight, getattr(layer, "bias", None))
    return layer(x)


def dense_or_tensor(x):
    """A tensor for layers that do not know :class:`SparseRows` (sparse COO)."""
    return x.to_torch() if isinstance(x, SparseRows) else x
