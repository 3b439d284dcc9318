"""Multi-label baselines: structure helpers checked by hand, every model learns."""

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import yaml
from hydra.utils import instantiate
from torch_geometric.data import Data

from graphnetz.models import sparse_products
from graphnetz.models.contract import capabilities
from graphnetz.models.multilabel import (
    GCNLPA,
    H2GCN,
    LANC,
    DeepWalk,
    SampledSAGE,
    neighbour_stack,
    random_walks,
    skipgram_embeddings,
    strict_two_hop,
)
from graphnetz.models.multilabel._graph import propagate
from graphnetz.models.multilabel.lanc import stacked_conv
from graphnetz.models.sparse_products import WeightedAdjacency

CONF = Path(__file__).resolve().parents[1] / "conf" / "model"
MODELS = {
    "deepwalk": DeepWalk,
    "h2gcn": H2GCN,
    "gcn_lpa": GCNLPA,
    "lanc": LANC,
    "sage_sampled": SampledSAGE,
}


def _undirected(pairs: list[tuple[int, int]]) -> torch.Tensor:
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    return torch.tensor([src, dst])


def _pairs(ei: torch.Tensor) -> set[tuple[int, int]]:
    return set(map(tuple, ei.t().tolist()))


@pytest.fixture(scope="module")
def ml_graph() -> Data:
    """80 nodes, 5 labels; features are noisy label indicators; edges prefer shared labels."""
    g = torch.Generator().manual_seed(0)
    n, c, f = 80, 5, 12
    y = (torch.rand(n, c, generator=g) < 0.3).float()
    x = torch.cat([y, torch.zeros(n, f - c)], 1) + 0.8 * torch.randn(n, f, generator=g)
    shared = (y @ y.t()) > 0
    prob = torch.where(shared, torch.tensor(0.12), torch.tensor(0.01))
    upper = torch.triu(torch.rand(n, n, generator=g) < prob, diagonal=1)
    i, j = upper.nonzero().t()
    edge_index = torch.cat([torch.stack([i, j]), torch.stack([j, i])], 1)
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[torch.randperm(n, generator=g)[:48]] = True
    return Data(x=x, edge_index=edge_index, y=y, train_mask=train_mask)


# --- DeepWalk ---------------------------------------------------------------


def test_walks_only_follow_existing_edges_and_isolated_nodes_stay_put():
    ei = _undirected([(0, 1), (1, 2), (2, 3), (3, 0), (1, 3)])  # node 4 is isolated
    walks = random_walks(
        ei, 5, walks_per_node=4, walk_length=12, generator=torch.Generator().manual_seed(0)
    )
    assert walks.shape == (20, 12)
    assert sorted(walks[:, 0].tolist()) == sorted(list(range(5)) * 4)
    steps = set(zip(walks[:, :-1].flatten().tolist(), walks[:, 1:].flatten().tolist(), strict=True))
    assert steps <= _pairs(ei) | {(4, 4)}
    assert (walks[walks[:, 0] == 4] == 4).all()


def test_walks_are_deterministic_per_seed():
    ei = _undirected([(a, (a + 1) % 9) for a in range(9)] + [(0, 4), (2, 7)])
    run = lambda s: random_walks(ei, 9, 3, 8, torch.Generator().manual_seed(s))  # noqa: E731
    assert torch.equal(run(1), run(1))
    assert not torch.equal(run(1), run(2))


def test_embeddings_are_deterministic_per_seed(ml_graph):
    walks = random_walks(ml_graph.edge_index, 80, 2, 6, torch.Generator().manual_seed(0))
    a = skipgram_embeddings(walks, 80, dim=8, seed=3, workers=1, epochs=2)
    b = skipgram_embeddings(walks, 80, dim=8, seed=3, workers=1, epochs=2)
    c = skipgram_embeddings(walks, 80, dim=8, seed=4, workers=1, epochs=2)
    assert a.shape == (80, 8)
    assert torch.equal(a, b) and not torch.equal(a, c)


_EMBED_SCRIPT = """
import torch
from torch_geometric.data import Data
from graphnetz.models.multilabel import DeepWalk
ei = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
m = DeepWalk(1, 8, 2, walks_per_node=3, walk_length=5, w2v_epochs=2)
m.precompute(Data(edge_index=ei, num_nodes=4), seed=11)
print(repr(m.embedding.flatten().tolist()))
"""


def test_deepwalk_is_reproducible_across_processes_with_different_hash_salts():
    # This process has its own (random or inherited) str-hash salt; the child a fixed one.
    namespace: dict = {}
    exec(_EMBED_SCRIPT.replace("print(", "result = ("), namespace)
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", _EMBED_SCRIPT],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.strip().splitlines()[-1] == namespace["result"]


def test_deepwalk_forward_needs_precompute():
    with pytest.raises(RuntimeError, match="precompute"):
        DeepWalk(4, 8, 3)(torch.randn(5, 4), _undirected([(0, 1)]))


# --- H2GCN ------------------------------------------------------------------


def test_strict_two_hop_on_a_path():
    path = _undirected([(0, 1), (1, 2), (2, 3), (3, 4)])
    expected = {(0, 2), (2, 0), (1, 3), (3, 1), (2, 4), (4, 2)}
    assert _pairs(strict_two_hop(path, 5)) == expected


def test_strict_two_hop_drops_one_hop_pairs_and_self_loops():
    # triangle 0-1-2 with a tail 2-3: 0 and 1 reach each other in 2 steps via 2 too,
    # but they are adjacent, so only the pairs through the tail remain.
    graph = _undirected([(0, 1), (1, 2), (0, 2), (2, 3)])
    assert _pairs(strict_two_hop(graph, 4)) == {(0, 3), (3, 0), (1, 3), (3, 1)}


# --- GCN-LPA ----------------------------------------------------------------


def test_lpa_predicts_a_training_node_from_its_neighbours_not_itself():
    # path 0-1-2, all three labelled: one LPA step gives node 1 the mean of 0 and 2,
    # and nodes 0 and 2 exactly their single neighbour's labels.
    y = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    data = Data(edge_index=_undirected([(0, 1), (1, 2)]), y=y, num_nodes=3)
    model = GCNLPA(2, 4, 2, lpa_iters=1)
    model.precompute(data, seed=0)
    pred = model.propagate_labels(data, torch.ones(3, dtype=torch.bool))
    expected = torch.tensor([[0.0, 1.0], [1.0, 0.5], [0.0, 1.0]])
    assert torch.allclose(pred, expected)


def test_lpa_loss_reaches_the_edge_weights(ml_graph):
    model = GCNLPA(12, 8, 5)
    model.precompute(ml_graph, seed=0)
    model.extra_loss(ml_graph, ml_graph.train_mask).backward()
    assert model.edge_logit.grad is not None and model.edge_logit.grad.abs().sum() > 0


def test_weighted_adjacency_matches_the_per_edge_scatter_and_its_gradients():
    """The sorted CSR product GCN-LPA trains with: same values as ``propagate`` and
    exact gradients for both the edge weights and the features (float64 gradcheck),
    on a directed graph with self-loops and a repeated edge."""
    gen = torch.Generator().manual_seed(0)
    edges = torch.cat(
        [torch.randint(0, 30, (2, 120), generator=gen), torch.tensor([[3, 3, 4], [3, 5, 5]])], dim=1
    )
    coef = torch.rand(edges.size(1), dtype=torch.float64, generator=gen, requires_grad=True)
    h = torch.randn(30, 4, dtype=torch.float64, generator=gen, requires_grad=True)
    op = WeightedAdjacency(edges, 30)
    assert torch.allclose(op(coef, h), propagate(edges, coef, h))
    assert torch.autograd.gradcheck(op, (coef, h))


def test_weighted_adjacency_on_a_dense_graph_takes_row_block_products(monkeypatch):
    """A dense graph's edge-weight gradient from dense products of row blocks (the last
    block partial), in groups (GAT's heads: rows node * 3 + k, edges inside a group):
    exact gradients (float64 gradcheck) and the per-edge dot products' values."""
    monkeypatch.setattr(sparse_products, "DENSE_MIN_NODES", 8)
    monkeypatch.setattr(sparse_products, "DENSE_MIN_WIDTH", 1)
    monkeypatch.setattr(sparse_products, "DENSE_BLOCK_FLOATS", 64)  # 3 rows a block
    gen = torch.Generator().manual_seed(0)
    nodes, groups = 20, 3
    pairs = torch.randint(0, nodes, (2, 150), generator=gen)  # repeated pairs, self-loops
    head = torch.arange(groups)
    edges = (pairs.unsqueeze(-1) * groups + head).reshape(2, -1)
    coef = torch.rand(edges.size(1), dtype=torch.float64, generator=gen, requires_grad=True)
    h = torch.randn(nodes * groups, 4, dtype=torch.float64, generator=gen, requires_grad=True)
    op = WeightedAdjacency(edges, nodes * groups, groups=groups)
    assert op._dense_graph
    assert torch.allclose(op(coef, h), propagate(edges, coef, h))
    assert torch.autograd.gradcheck(op, (coef, h))
    assert op._row_blocks is not None and op._row_blocks.rows == 3
    grad = torch.randn(nodes * groups, 4, dtype=torch.float64, generator=gen)
    expected = (grad[edges[1]] * h[edges[0]]).sum(-1)
    assert torch.allclose(op.edge_dot(grad, h), expected)


def test_gcn_lpa_needs_precompute_on_the_graph_it_runs_on():
    model = GCNLPA(4, 8, 3)
    model.precompute(Data(edge_index=_undirected([(0, 1), (1, 2)]), num_nodes=3), seed=0)
    with pytest.raises(ValueError, match="not prepared on"):
        model(torch.randn(3, 4), _undirected([(0, 2)]))


def test_gcn_lpa_forward_needs_precompute():
    with pytest.raises(RuntimeError, match="precompute"):
        GCNLPA(4, 8, 3)(torch.randn(2, 4), _undirected([(0, 1)]))


# --- LANC -------------------------------------------------------------------


def test_neighbour_stack_is_ego_then_neighbours():
    ei = _undirected([(0, 1), (0, 2), (1, 2)])  # node 3 isolated
    stack = neighbour_stack(ei, 4, 6, torch.Generator().manual_seed(0))
    assert stack.shape == (4, 7)
    assert stack[:, 0].tolist() == [0, 1, 2, 3]
    for v in range(3):
        assert set(stack[v, 1:].tolist()) <= set(ei[1][ei[0] == v].tolist())
    assert (stack[3] == 3).all()


def test_lanc_shapes_and_gradients_reach_every_parameter(ml_graph):
    model = LANC(12, 16, 5, num_neighbors=4)
    out = model(ml_graph.x, ml_graph.edge_index)
    assert out.shape == (80, 5)
    out.sum().backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_lanc_sorts_a_graphs_neighbours_once_and_again_for_another_graph(ml_graph, monkeypatch):
    from graphnetz.models.multilabel import lanc as lanc_module

    calls = []
    original = lanc_module.to_csr
    monkeypatch.setattr(lanc_module, "to_csr", lambda *a: calls.append(1) or original(*a))
    model = LANC(12, 16, 5, num_neighbors=4)
    x, ei = ml_graph.x, ml_graph.edge_index
    model(x, ei)
    state = torch.get_rng_state()
    cached = model(x, ei)
    model.eval()
    with torch.inference_mode():
        model(x, ei)
    assert len(calls) == 1
    fresh = LANC(12, 16, 5, num_neighbors=4)  # same weights, nothing cached
    fresh.load_state_dict(model.state_dict())
    torch.set_rng_state(state)
    assert torch.equal(fresh.train()(x, ei), cached)
    assert len(calls) == 2
    fewer = ei[:, ei[0] != 0]  # node 0 loses its out-neighbours: another stack
    assert not torch.equal(model(x, fewer), model(x, ei))
    assert len(calls) == 3


@pytest.mark.parametrize(("kernel", "padding"), [(1, 0), (3, 1), (5, 2), (2, 1), (4, 0), (3, 2)])
def test_stacked_conv_is_the_convolution_of_the_gathered_stack(kernel, padding):
    gen = torch.Generator().manual_seed(kernel)
    conv = torch.nn.Conv1d(6, 4, kernel, padding=padding).double()
    h = torch.randn(15, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    stack = torch.randint(0, 15, (15, 7), generator=gen)
    reference = conv(h[stack].transpose(1, 2)).transpose(1, 2)
    assert torch.allclose(stacked_conv(conv, h, stack), reference)
    assert torch.autograd.gradcheck(lambda v: stacked_conv(conv, v, stack), (h,))


def test_lanc_eval_matches_the_documented_formula(ml_graph):
    """Eval mode (no dropout) against the formula written out naively: convolve the
    gathered stack, materialise the per-label contexts z [N, C, H], then score."""
    torch.manual_seed(0)
    model = LANC(12, 16, 5, num_neighbors=4, num_layers=2).eval()
    x, ei = ml_graph.x, ml_graph.edge_index
    stack = neighbour_stack(ei, x.size(0), 4, torch.Generator().manual_seed(model.eval_seed))
    h = F.relu(model.project(x))
    u = h[stack].transpose(1, 2)
    for conv in model.convs:
        u = F.relu(conv(u))
    u = u.transpose(1, 2)
    alpha = torch.einsum("nlh,ch->ncl", u, model.label_embedding).div(16**0.5).softmax(-1)
    z = torch.einsum("ncl,nlh->nch", alpha, u)
    expected = ((z + h.unsqueeze(1)) * model.label_out).sum(-1) + model.label_bias
    assert torch.allclose(model(x, ei), expected, atol=1e-5)


@pytest.mark.parametrize("num_layers", [1, 2, 3])
def test_lanc_on_chosen_rows_equals_the_full_forward_with_the_same_random_draws(
    ml_graph, num_layers
):
    """Training on the train rows only must be the full forward restricted to them: same
    stacks, same dropout masks (drawn for every node), same logits and gradients."""
    x, ei = ml_graph.x, ml_graph.edge_index
    chosen = torch.rand(x.size(0), generator=torch.Generator().manual_seed(5)) < 0.6
    model = LANC(12, 16, 5, num_neighbors=4, num_layers=num_layers, dropout=0.4).train()
    grads, outs = [], []
    for output_nodes in (None, chosen, chosen.nonzero().squeeze(1)):
        model.zero_grad()
        torch.manual_seed(11)
        out = model(x, ei, output_nodes=output_nodes)
        out = out[chosen] if output_nodes is None else out
        out.square().sum().backward()
        outs.append(out)
        grads.append([p.grad.clone() for p in model.parameters()])
    for out, grad in zip(outs[1:], grads[1:], strict=True):
        torch.testing.assert_close(out, outs[0], rtol=1e-5, atol=1e-6)
        for a, b in zip(grad, grads[0], strict=True):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_lanc_on_chosen_rows_leaves_the_random_stream_where_the_full_forward_does(ml_graph):
    model = LANC(12, 16, 5, num_neighbors=4, dropout=0.5).train()
    after = []
    for output_nodes in (None, ml_graph.train_mask):
        torch.manual_seed(3)
        model(ml_graph.x, ml_graph.edge_index, output_nodes=output_nodes)
        after.append(torch.rand(4))
    assert torch.equal(after[0], after[1])


@pytest.mark.parametrize("empty", [torch.zeros(0, dtype=torch.long), "no rows of the mask"])
def test_lanc_on_no_chosen_rows_gives_no_logits(ml_graph, empty):
    if isinstance(empty, str):
        empty = torch.zeros(ml_graph.num_nodes, dtype=torch.bool)
    model = LANC(12, 16, 5, num_neighbors=4).train()
    out = model(ml_graph.x, ml_graph.edge_index, output_nodes=empty)
    assert out.shape == (0, 5)
    out.sum().backward()  # a loss over no rows still has a graph


def test_node_task_asks_lanc_for_the_train_rows_only(ml_graph):
    from graphnetz.tasks.node_tasks import MultiLabelNodeClassificationTask

    seen = []
    model = LANC(12, 16, 5, num_neighbors=4)
    model.register_forward_pre_hook(lambda _, args, kwargs: seen.append(kwargs), with_kwargs=True)
    loss = MultiLabelNodeClassificationTask(
        model, optimizer=partial(torch.optim.Adam, lr=0.01), lr=0.01, weight_decay=0.0
    ).training_loss(ml_graph)
    assert torch.equal(seen[0]["output_nodes"], ml_graph.train_mask)
    assert loss.ndim == 0 and torch.isfinite(loss)


def test_lanc_eval_is_deterministic(ml_graph):
    model = LANC(12, 16, 5).eval()
    a = model(ml_graph.x, ml_graph.edge_index)
    assert torch.equal(a, model(ml_graph.x, ml_graph.edge_index))


# --- SampledSAGE ------------------------------------------------------------


def test_sampled_sage_samples_in_training_and_uses_full_graph_in_eval(ml_graph):
    model = SampledSAGE(12, 16, 5, dropout=0.0, num_neighbors=[1, 1])
    torch.manual_seed(0)
    train_out = model(ml_graph.x, ml_graph.edge_index)
    model.eval()
    full = model(ml_graph.x, ml_graph.edge_index)
    assert torch.equal(full, model(ml_graph.x, ml_graph.edge_index))
    assert not torch.allclose(train_out, full)


def test_sampled_sage_needs_one_fanout_per_layer():
    with pytest.raises(ValueError, match="num_neighbors"):
        SampledSAGE(4, 8, 3, num_layers=3, num_neighbors=[25, 10])


# --- every model: contract, config, learning --------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_config_instantiates_the_model(name):
    cfg = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    assert cfg.pop("name") == name
    model = instantiate(cfg, in_channels=12, out_channels=5)
    assert isinstance(model, MODELS[name])
    assert "ml_node_cls" in model.task_types


def _train_loss(model, data) -> torch.Tensor:
    logits = model(data.x, data.edge_index)
    loss = F.binary_cross_entropy_with_logits(logits[data.train_mask], data.y[data.train_mask])
    if capabilities(model).adds_loss:
        loss = loss + model.extra_loss(data, data.train_mask)
    return loss


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_reduces_training_loss(name, ml_graph):
    torch.manual_seed(0)
    extra = {"w2v_epochs": 2, "walks_per_node": 5} if name == "deepwalk" else {}
    model = MODELS[name](12, 16, 5, **extra)
    if capabilities(model).precomputes:
        model.precompute(ml_graph, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    model.eval()
    with torch.no_grad():
        before = float(_train_loss(model, ml_graph))
    model.train()
    for _ in range(50):
        opt.zero_grad()
        _train_loss(model, ml_graph).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        after = float(_train_loss(model, ml_graph))
    assert after < 0.9 * before, (before, after)
