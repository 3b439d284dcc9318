"""Exact int8 products with a 0/1 matrix (H2GCN's dense 2-hop operator on the CPU)."""

from __future__ import annotations

import pytest
import torch

from graphnetz.models.multilabel import h2gcn
from graphnetz.models.multilabel.h2gcn import hop_operators
from graphnetz.models.multilabel.mask_products import ScaledMaskOperator, mask_product


def _mask(rows: int, cols: int, density: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(rows, cols, generator=g) < density).to(torch.int8)


def _fixed_point(h: torch.Tensor) -> torch.Tensor:
    """h rounded to 28-bit fixed point per column (what the digits hold), in float64."""
    exponent = torch.frexp(h.abs().amax(0)).exponent.double()
    scale = torch.exp2(27 - exponent)
    return torch.round(h.double() * scale) / scale


def test_the_product_is_the_exact_sum_of_the_fixed_point_rows_rounded_once():
    mask = _mask(70, 300, 0.6, seed=0)
    h = torch.randn(300, 9, generator=torch.Generator().manual_seed(1)) * torch.logspace(-3, 3, 9)
    out = mask_product(mask, h)
    exact = (mask.double() @ _fixed_point(h)).float()  # integers times 2^-e: exact in float64
    assert out.dtype == torch.float32
    assert torch.equal(out, exact)
    # and closer to the true product than float32 arithmetic gets
    truth = mask.double() @ h.double()
    int8_error = (out.double() - truth).abs().max()
    float_error = ((mask.float() @ h).double() - truth).abs().max()
    assert int8_error <= float_error


def test_the_result_does_not_depend_on_order_or_threads():
    mask = _mask(50, 400, 0.5, seed=2)
    h = torch.randn(400, 6, generator=torch.Generator().manual_seed(3))
    reference = mask_product(mask, h)
    perm = torch.randperm(400, generator=torch.Generator().manual_seed(4))
    assert torch.equal(mask_product(mask[:, perm].contiguous(), h[perm]), reference)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert torch.equal(mask_product(mask, h), reference)
    finally:
        torch.set_num_threads(threads)


def test_a_column_with_a_non_finite_value_comes_out_nan():
    mask = _mask(20, 30, 0.5, seed=5)
    h = torch.randn(30, 4, generator=torch.Generator().manual_seed(6))
    clean = mask_product(mask, h)
    h[3, 1], h[7, 2] = float("nan"), float("inf")
    out = mask_product(mask, h)
    assert out[:, 1:3].isnan().all()
    assert torch.equal(out[:, [0, 3]], clean[:, [0, 3]])


def test_float64_rows_get_a_float64_product():
    mask = _mask(6, 9, 0.5, seed=10)
    h = torch.randn(9, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(11))
    out = mask_product(mask, h)
    assert out.dtype == torch.float64
    assert torch.equal(out, mask.double() @ h)


def test_zero_columns_and_empty_shapes():
    mask = _mask(5, 8, 0.5, seed=7)
    assert torch.equal(mask_product(mask, torch.zeros(8, 3)), torch.zeros(5, 3))
    assert mask_product(mask, torch.zeros(8, 0)).shape == (5, 0)
    empty = torch.zeros(5, 0, dtype=torch.int8)
    assert torch.equal(mask_product(empty, torch.zeros(0, 3)), torch.zeros(5, 3))


@pytest.mark.parametrize("symmetric", [True, False])
def test_scaled_operator_values_gradient_and_rows(symmetric):
    n = 40
    mask = _mask(n, n, 0.4, seed=8)
    if symmetric:
        mask = mask | mask.t()
    g = torch.Generator().manual_seed(9)
    left, right = torch.rand(n, generator=g), torch.rand(n, generator=g)
    op = ScaledMaskOperator(mask.bool(), left, right)
    assert (op.mask_t is op.mask) == symmetric
    dense = left.double().unsqueeze(1) * mask.double() * right.double().unsqueeze(0)
    h = torch.randn(n, 5, generator=g, requires_grad=True)
    weights = torch.randn(n, 5, generator=g)
    out = op(h)
    torch.testing.assert_close(out.double(), dense @ h.double(), rtol=1e-5, atol=1e-6)
    (out * weights).sum().backward()
    torch.testing.assert_close(h.grad.double(), dense.t() @ weights.double(), rtol=1e-5, atol=1e-6)
    rows = torch.tensor([3, 0, 17, 39])
    sub = op.rows(rows)
    h2 = h.detach().clone().requires_grad_()
    sub_out = sub(h2)
    assert torch.equal(sub_out, out.detach()[rows])  # the same exact sums, row by row
    (sub_out * weights[rows]).sum().backward()
    torch.testing.assert_close(
        h2.grad.double(), dense[rows].t() @ weights[rows].double(), rtol=1e-5, atol=1e-6
    )


def test_h2gcn_takes_the_int8_operator_from_its_node_threshold(monkeypatch):
    n = 60
    upper = torch.triu(torch.rand(n, n, generator=torch.Generator().manual_seed(0)) < 0.3, 1)
    ei = (upper | upper.t()).nonzero().t()
    h = torch.randn(n, 4, generator=torch.Generator().manual_seed(1))
    float_op = hop_operators(ei, n)[1]
    assert not isinstance(float_op, ScaledMaskOperator)  # 60 nodes: under the threshold
    monkeypatch.setattr(h2gcn, "INT8_MIN_NODES", 0)
    int8_op = hop_operators(ei, n)[1]
    assert isinstance(int8_op, ScaledMaskOperator)
    torch.testing.assert_close(int8_op(h), float_op(h), rtol=1e-5, atol=1e-6)


def test_h2gcn_with_the_int8_operator_trains_on_chosen_rows_as_on_all(monkeypatch):
    monkeypatch.setattr(h2gcn, "INT8_MIN_NODES", 0)
    n = 60
    g = torch.Generator().manual_seed(7)
    upper = torch.triu(torch.rand(n, n, generator=g) < 0.3, 1)
    ei = (upper | upper.t()).nonzero().t()
    x = torch.randn(n, 7, generator=g)
    chosen = torch.rand(n, generator=g) < 0.6
    model = h2gcn.H2GCN(7, 8, 3, num_layers=2, dropout=0.4).train()
    results = []
    for output_nodes in (None, chosen):
        model.zero_grad()
        torch.manual_seed(2)
        out = model(x, ei, output_nodes=output_nodes)
        out = out[chosen] if output_nodes is None else out
        out.square().sum().backward()
        results.append((out, [p.grad.clone() for p in model.parameters()]))
    (full, full_grads), (rows, row_grads) = results
    assert isinstance(model._cache.get(ei, n, hop_operators)[1], ScaledMaskOperator)
    torch.testing.assert_close(rows, full)
    for a, b in zip(row_grads, full_grads, strict=True):
        torch.testing.assert_close(a, b)
    model.eval()  # evaluation propagates the classifier's scores through the same operator
    with torch.no_grad():
        hops = hop_operators(ei, n)
        reps = [torch.relu(model.ego(x))]
        for _ in range(2):
            reps.append(torch.cat([op(reps[-1]) for op in hops], dim=-1))
        expected = model.classifier(torch.cat(reps, dim=-1))
        torch.testing.assert_close(model(x, ei), expected, rtol=1e-4, atol=1e-5)
