"""Exact products with a fixed 0/1 matrix, in int8 arithmetic (CPU).

H2GCN's dense strict 2-hop operator is ``diag(s) · M · diag(s)`` with ``M`` a 0/1 matrix
covering most node pairs (BlogCatalog: 61 % of 10 312²), so its products are dense and
cost most of a training step. Held as int8, ``M`` takes a quarter of the float matrix's
memory, and ``M @ h`` is computed exactly:

* each column of ``h`` is written as 28-bit fixed point, ``q = round(h · 2^e)`` with the
  column's power of two ``e`` chosen so that ``|q| <= 2^27`` (at most half a unit of
  ``2^-e`` lost per entry: at most 2^-27 of the column's largest magnitude);
* ``q`` is split into four int8 digits (base 128: three in 0..127, the top one signed),
  and one ``torch._int_mm`` (int8 x int8, int32 sums: exact) multiplies ``M`` by all four
  digit blocks;
* the digit sums are recombined in float64 (integers below 2^53: exact), scaled back by
  ``2^-e`` (exact) and rounded once to float32.

So the result is the exact product of ``M`` with the fixed-point ``h``, rounded once: the
same for any summation order and thread count (a float32 product's rounding depends on
both), and on activations of comparable size within a column (H2GCN's scaled ReLU
features) about half as far from the true product as float32. It is an absolute bound:
an entry below 2^-28 of its column's largest magnitude counts as zero, where float32
keeps its relative precision. On a CPU with int8 matrix units the four digit products cost
less than one float32 product (docs/speed.md, 2026-12-06). A column holding a non-finite
value has no fixed-point form: it comes out as NaN in every row (the run is reported
diverged, as a float product's NaNs would make it).
"""

from __future__ import annotations

import torch
from torch import Tensor

#: Fixed-point bits of each column's largest value: |q| <= 2^27, four base-128 digits.
FIXED_POINT_BITS = 27
DIGIT_BITS = 7
DIGITS = 4


def _digits(h: Tensor) -> tuple[Tensor, Tensor]:
    """``h`` ``[K, c]`` as int8 digits ``[K, 4·c]`` (block k holds digit k of every column)
    and each column's exponent ``e`` (``h ≈ q · 2^-e``), NaN-free columns only."""
    exponent = torch.frexp(h.abs().amax(0)).exponent  # column max < 2^exponent
    shift = (FIXED_POINT_BITS - exponent).to(torch.float64)
    q = torch.round(h.to(torch.float64) * torch.exp2(shift)).to(torch.int32)
    digits = torch.empty(h.size(0), DIGITS, h.size(1), dtype=torch.int8, device=h.device)
    for k in range(DIGITS - 1):
        digits[:, k] = q & ((1 << DIGIT_BITS) - 1)
        q >>= DIGIT_BITS
    digits[:, DIGITS - 1] = q  # signed: |q| <= 2^27 leaves it in [-64, 64]
    return digits.view(h.size(0), -1), shift


def mask_product(mask: Tensor, h: Tensor) -> Tensor:
    """``mask @ h`` for an int8 0/1 ``mask`` ``[R, K]`` and float32 ``h`` ``[K, c]``: the
    exact product with ``h`` in 28-bit fixed point per column, rounded once to float32.
    Another dtype (float64 carries more than 28 bits) gets a float product in it."""
    if h.dtype != torch.float32:
        return mask.to(h.dtype) @ h
    if h.size(1) == 0 or mask.size(0) == 0 or h.size(0) == 0:
        return h.new_zeros(mask.size(0), h.size(1))
    finite = torch.isfinite(h.abs().amax(0))
    clean = h if bool(finite.all()) else torch.where(finite, h, 0.0)
    digits, shift = _digits(clean)
    sums = torch._int_mm(mask, digits).view(mask.size(0), DIGITS, h.size(1))
    exact = sums[:, DIGITS - 1].to(torch.float64)  # integers below 2^53: exact in float64
    for k in range(DIGITS - 2, -1, -1):
        exact.mul_(1 << DIGIT_BITS).add_(sums[:, k])
    out = exact.mul_(torch.exp2(-shift)).to(torch.float32)
    return out if clean is h else out.masked_fill_(~finite, float("nan"))


class _ScaledMaskProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h: Tensor, op: ScaledMaskOperator) -> Tensor:
        ctx.op = op
        return op.left.unsqueeze(1) * mask_product(op.mask, op.right.unsqueeze(1) * h)

    @staticmethod
    def backward(ctx, grad: Tensor):
        op = ctx.op
        return op.right.unsqueeze(1) * mask_product(op.mask_t, op.left.unsqueeze(1) * grad), None


class ScaledMaskOperator:
    """``h -> diag(left) · M · diag(right) · h`` for a fixed 0/1 matrix ``M`` ``[R, K]``,
    multiplied exactly in int8 (:func:`mask_product`); no gradient flows to the scales.

    ``mask_t``: ``M^T`` as int8, for the backward pass (the same tensor when M is
    symmetric, built once otherwise).
    """

    def __init__(self, mask: Tensor, left: Tensor, right: Tensor, mask_t: Tensor | None = None):
        self.mask = mask.to(torch.int8).contiguous()
        if mask_t is None:
            symmetric = mask.size(0) == mask.size(1) and torch.equal(mask, mask.t())
            mask_t = self.mask if symmetric else self.mask.t().contiguous()
        self.mask_t = mask_t
        self.left, self.right = left.detach(), right.detach()

    def __call__(self, h: Tensor) -> Tensor:
        return _ScaledMaskProduct.apply(h, self)

    def rows(self, index: Tensor) -> ScaledMaskOperator:
        """The operator ``h -> (P @ h)[index]``, computing only those rows."""
        return ScaledMaskOperator(
            self.mask.index_select(0, index),
            self.left[index],
            self.right,
            mask_t=self.mask_t.index_select(1, index),
        )
