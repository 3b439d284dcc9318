"""The multi-label models' fast paths compute what their documented formulas say.

H2GCN's cached operators (sparse CSR, or dense when the strict 2-hop set covers most
pairs) must equal the per-edge sum out[j] = Σ_(i→j) coef_ij h[i]; sparse one-hot
features (BlogCatalog) must give the same logits as the dense identity matrix.
"""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data

from graphnetz.models.contract import capabilities
from graphnetz.models.features import embedding_decay_warning, is_one_hot_ids
from graphnetz.models.multilabel import GCNLPA, H2GCN, LANC, SampledSAGE, strict_two_hop
from graphnetz.models.multilabel._graph import normalize, simple_edges
from graphnetz.models.multilabel.h2gcn import hop_operators


def random_undirected(n: int, p: float, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    upper = torch.triu(torch.rand(n, n, generator=g) < p, diagonal=1)
    return (upper | upper.t()).nonzero().t()


def edge_sum(edge_index: torch.Tensor, coef: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """out[j] = Σ over edges (i → j) of coef_ij · h[i], one edge at a time (the definition)."""
    out = torch.zeros_like(h)
    for (i, j), c in zip(edge_index.t().tolist(), coef.tolist(), strict=True):
        out[j] += c * h[i]
    return out


@pytest.mark.parametrize(("p", "dense_two_hop"), [(0.03, False), (0.3, True)])
def test_h2gcn_operators_equal_the_per_edge_sums(p, dense_two_hop):
    n = 60
    ei = random_undirected(n, p, seed=0)
    one, two = simple_edges(ei, n), strict_two_hop(ei, n)
    # dense route taken iff the 2-hop set covers >= 10 % of the pairs (the documented switch)
    assert (two.size(1) >= 0.1 * n * n) == dense_two_hop
    h = torch.randn(n, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ops = hop_operators(ei, n)
    for op, hop in zip(ops, (one, two), strict=True):
        expected = edge_sum(hop, normalize(hop, n, mode="sym").double(), h)
        torch.testing.assert_close(op(h.float()).double(), expected, rtol=1e-5, atol=1e-6)


def test_h2gcn_operator_gradient_is_the_transposed_sum():
    n = 30
    ei = random_undirected(n, 0.1, seed=2)
    op = hop_operators(ei, n)[1]
    h = torch.randn(n, 3, requires_grad=True)
    weights = torch.randn(n, 3)
    (op(h) * weights).sum().backward()
    two = strict_two_hop(ei, n)
    coef = normalize(two, n, mode="sym")
    # d/dh[i] Σ_j w_j · Σ_(i→j) c_ij h[i] = Σ_(i→j) c_ij w_j: the sum over reversed edges
    expected = edge_sum(two.flip(0), coef, weights)
    torch.testing.assert_close(h.grad, expected)


@pytest.mark.parametrize("num_layers", [1, 2, 3])
@pytest.mark.parametrize("dense_two_hop", [False, True])
def test_h2gcn_scores_propagated_after_the_classifier_equal_the_concatenation(
    num_layers, dense_two_hop
):
    """Eval applies the classifier first and propagates C columns: it must give the
    logits of W · [r0 || r1 || ... || rK] built as the paper writes it."""
    n = 60
    ei = random_undirected(n, 0.3 if dense_two_hop else 0.03, seed=num_layers)
    g = torch.Generator().manual_seed(num_layers)
    x = torch.randn(n, 7, generator=g)
    model = H2GCN(7, 8, 3, num_layers=num_layers).eval()
    reps = [torch.relu(model.ego(x))]
    hops = hop_operators(ei, n)
    for _ in range(num_layers):
        reps.append(torch.cat([op(reps[-1]) for op in hops], dim=-1))
    expected = model.classifier(torch.cat(reps, dim=-1))
    torch.testing.assert_close(model(x, ei), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("dense_two_hop", [False, True])
def test_h2gcn_on_chosen_rows_equals_the_full_forward_with_the_same_random_draws(
    num_layers, dense_two_hop
):
    n = 60
    ei = random_undirected(n, 0.3 if dense_two_hop else 0.03, seed=7)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, 7, generator=g)
    chosen = torch.rand(n, generator=g) < 0.6
    model = H2GCN(7, 8, 3, num_layers=num_layers, dropout=0.4).train()
    results = []
    for output_nodes in (None, chosen, chosen.nonzero().squeeze(1), chosen):  # twice: cached
        model.zero_grad()
        torch.manual_seed(2)
        out = model(x, ei, output_nodes=output_nodes)
        out = out[chosen] if output_nodes is None else out
        out.square().sum().backward()
        results.append((out, [p.grad.clone() for p in model.parameters()], torch.rand(3)))
    reference, ref_grads, ref_next = results[0]
    for out, grads, next_draw in results[1:]:
        torch.testing.assert_close(out, reference)
        for a, b in zip(grads, ref_grads, strict=True):
            torch.testing.assert_close(a, b)
        assert torch.equal(next_draw, ref_next)  # the random stream is where it was


@pytest.mark.parametrize("cls", [H2GCN, GCNLPA, LANC, SampledSAGE], ids=lambda c: c.__name__)
def test_sparse_one_hot_features_give_the_dense_identity_logits(cls):
    n = 40
    ei = random_undirected(n, 0.1, seed=3)
    eye = torch.eye(n)
    data = Data(x=eye, edge_index=ei, y=(torch.rand(n, 5) < 0.3).float(), num_nodes=n)
    torch.manual_seed(0)
    model = cls(n, 16, 5)
    if capabilities(model).precomputes:
        model.precompute(data, 0)
    model.eval()
    torch.testing.assert_close(model(eye.to_sparse(), ei), model(eye, ei))
    model.train()
    model(eye.to_sparse(), ei).sum().backward()  # trainable on sparse input
    assert all(p.grad is not None for p in model.parameters())


def test_one_hot_ids_are_recognised_sparse_or_dense_and_only_they_warn():
    eye = torch.eye(6)
    assert is_one_hot_ids(eye) and is_one_hot_ids(eye.to_sparse())
    for other in (
        eye * 2,
        eye[:, :5],
        torch.ones(6, 6),
        (eye + torch.diag(torch.ones(5), 1)).to_sparse(),
    ):
        assert not is_one_hot_ids(other)
    assert "task.weight_decay=0.0005" in embedding_decay_warning(eye.to_sparse(), 5e-4)
    assert embedding_decay_warning(eye, 0.0) is None
    assert embedding_decay_warning(torch.rand(6, 3), 5e-4) is None
    assert embedding_decay_warning(None, 5e-4) is None


def test_sage_projects_wide_inputs_before_aggregating_with_the_same_result():
    # 12 input columns > 8 outputs triggers the project-first order; node 9 is isolated,
    # where mean aggregation gives 0 and the layer must still add its bias.
    from torch_geometric.nn import SAGEConv

    from graphnetz.models.multilabel.sage_sampled import _project_then_aggregate

    ei = random_undirected(9, 0.4, seed=4)
    x = torch.randn(10, 12)
    conv = SAGEConv(12, 8)
    torch.testing.assert_close(_project_then_aggregate(conv, x, ei), conv(x, ei))
    torch.testing.assert_close(_project_then_aggregate(conv, x.to_sparse(), ei), conv(x, ei))
