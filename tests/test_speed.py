"""The speed paths compute what the plain paths compute: sparse first layers, linear-first
SAGE, cached GCN normalisation, fast dropout, in-epoch evaluation; and stay deterministic."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import GCNConv, SAGEConv

from graphnetz.models import GAT, GCN, MLP, GraphSAGE, GraphTransformer, convs, sparse_features
from graphnetz.models.convs import CachedNormGCNConv, LinearFirstSAGEConv
from graphnetz.models.features import embedding_decay_warning
from graphnetz.models.graph_cache import GraphCache
from graphnetz.models.sparse_features import SparseFeatures, SparseRows, fast_dropout
from graphnetz.training.run import run_experiment


def _bag_of_words(nodes: int = 60, words: int = 200, density: float = 0.03, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(nodes, words, generator=g) < density).float()
    edges = torch.randint(0, nodes, (2, 4 * nodes), generator=g)
    edges = edges[:, edges[0] != edges[1]]
    edges = torch.unique(torch.cat([edges, edges.flip(0)], 1), dim=1)  # simple, undirected
    return x, edges


def test_sparse_rows_linear_gives_dense_values_and_weight_gradients():
    x, _ = _bag_of_words()
    weight = torch.randn(7, x.size(1), requires_grad=True)
    bias = torch.randn(7, requires_grad=True)
    grad_out = torch.randn(x.size(0), 7)
    SparseRows.from_tensor(x).linear(weight, bias).backward(grad_out)
    sparse_grads = weight.grad.clone(), bias.grad.clone()
    weight.grad = bias.grad = None
    F.linear(x, weight, bias).backward(grad_out)
    assert torch.allclose(sparse_grads[0], weight.grad, atol=1e-5)
    assert torch.allclose(sparse_grads[1], bias.grad, atol=1e-5)
    assert torch.equal(SparseRows.from_tensor(x).to_dense(), x)


def test_sparse_rows_from_coo_keeps_every_stored_entry():
    x, _ = _bag_of_words()
    rows = SparseRows.from_tensor(x.to_sparse())
    assert rows.values.numel() == int(x.count_nonzero()) and rows.shape == x.shape
    assert torch.equal(rows.transposed().to_dense(), x.t())


def test_sparse_features_convert_only_sparse_wide_constant_inputs():
    cache = SparseFeatures()
    x, _ = _bag_of_words()
    converted = cache.get(x)
    assert isinstance(converted, SparseRows)
    assert cache.get(x) is converted  # the same tensor: converted once
    x[0, 0] = 5.0  # modified in place: converted again, with the new value
    assert cache.get(x) is not converted and cache.get(x).to_dense()[0, 0] == 5.0
    dense = torch.rand(60, 200)
    assert cache.get(dense) is dense  # 100 % non-zero: dense kernels
    narrow = (torch.rand(60, 20) < 0.03).float()
    assert cache.get(narrow) is narrow  # too few columns to pay
    learned = x.clone().requires_grad_()
    assert cache.get(learned) is learned  # needs a gradient: left alone


def test_every_model_of_the_process_shares_a_feature_tensors_conversion():
    """A sweep's runs share the cached dataset's features: the second run's new model
    takes the first one's conversion, until the tensor is modified."""
    x, _ = _bag_of_words()
    first = SparseFeatures().get(x)
    assert SparseFeatures().get(x) is first
    x[1, 1] = 3.0
    again = SparseFeatures().get(x)
    assert again is not first and again.to_dense()[1, 1] == 3.0
    dense = torch.rand(60, 200)
    assert SparseFeatures().get(dense) is dense
    assert dense not in sparse_features._CONVERTED  # nothing kept: no leak


@pytest.mark.parametrize("cls", [GCN, GAT, GraphSAGE, GraphTransformer, MLP])
def test_encoders_give_the_dense_result_and_gradients_on_sparse_features(cls):
    """Same parameters, eval mode: the sparse first layer is the dense one up to rounding."""
    x, edges = _bag_of_words()
    torch.manual_seed(0)
    model = cls(x.size(1), 16, 3).eval()
    sparse_out = model(x, edges)  # converted to SparseRows inside
    assert isinstance(model._sparse_features.get(x), SparseRows)
    sparse_out.square().sum().backward()
    sparse_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model._sparse_features.get = lambda features: features  # force the dense path
    dense_out = model(x, edges)
    dense_out.square().sum().backward()
    assert torch.allclose(sparse_out, dense_out, atol=1e-5)
    for sparse_grad, param in zip(sparse_grads, model.parameters(), strict=True):
        assert torch.allclose(sparse_grad, param.grad, atol=1e-4)


@pytest.mark.parametrize("aggr", ["mean", "sum"])
@pytest.mark.parametrize("in_out", [(30, 5), (5, 30)])
def test_linear_first_sage_is_sage_conv(aggr, in_out):
    x, edges = _bag_of_words(words=in_out[0], density=0.5)
    torch.manual_seed(0)
    ours = LinearFirstSAGEConv(*in_out, aggr=aggr)
    theirs = SAGEConv(*in_out, aggr=aggr)
    theirs.load_state_dict(ours.state_dict())
    assert torch.allclose(ours(x, edges), theirs(x, edges), atol=1e-5)


def test_cached_gcn_normalisation_is_gcn_conv_and_follows_a_new_graph():
    x, edges = _bag_of_words(words=12, density=0.5)
    torch.manual_seed(0)
    ours, theirs = CachedNormGCNConv(12, 4), GCNConv(12, 4)
    theirs.load_state_dict(ours.state_dict())
    assert torch.allclose(ours(x, edges), theirs(x, edges), atol=1e-6)
    fewer = edges[:, ::2].contiguous()
    assert torch.allclose(ours(x, fewer), theirs(x, fewer), atol=1e-6)


def test_gcn_layers_normalise_a_new_graph_once_with_the_same_outputs(monkeypatch):
    """The layers of a GCN share one normalisation cache: each new mini-batch graph is
    normalised once for all three layers, and every output is that of layers which
    normalise on their own."""
    x, edges = _bag_of_words(words=12, density=0.5)
    torch.manual_seed(0)
    shared = GCN(12, 8, 3, num_layers=3).eval()
    torch.manual_seed(0)
    alone = GCN(12, 8, 3, num_layers=3).eval()
    for layer in alone.layers:
        layer._normalized = GraphCache()
    assert len({id(layer._normalized) for layer in shared.layers}) == 1
    built = []
    original = convs.gcn_norm
    monkeypatch.setattr(convs, "gcn_norm", lambda *a: built.append(1) or original(*a))
    graphs = [edges, edges[:, ::2].contiguous(), edges[:, 1::3].contiguous()]
    for graph in graphs:  # new graphs, as a graph task's training batches are
        before = len(built)
        assert torch.equal(shared(x, graph), alone(x, graph))
        assert len(built) - before == 1 + 3  # one for the shared cache, three unshared


def test_fast_dropout_has_dropout_distribution_and_is_seeded():
    x = torch.ones(200_000)
    torch.manual_seed(0)
    out = fast_dropout(x, 0.3, True)
    assert out.unique().tolist() == [0.0, pytest.approx(1 / 0.7)]
    assert abs(float((out > 0).float().mean()) - 0.7) < 0.005  # ~10 standard errors
    torch.manual_seed(0)
    assert torch.equal(out, fast_dropout(x, 0.3, True))
    assert fast_dropout(x, 0.3, False) is x


def test_in_epoch_evaluation_records_what_the_validation_loop_records(make_cfg):
    """The same run evaluated by Lightning's validation loop and inside the training
    epoch gives the identical history (same forward passes, same random stream)."""
    from hydra.utils import instantiate

    from graphnetz.training.lightning_task import LightningTask
    from graphnetz.training.pipeline import build_run
    from graphnetz.training.resolve import resolve_run

    histories = []
    for in_epoch in (True, False):
        spec = resolve_run(make_cfg("model=gat", "seed=2", "trainer.max_epochs=6"))
        built = build_run(spec)
        trainer = instantiate(spec.section("trainer"))
        if in_epoch:
            built.module.eval_loaders = built.data.eval_loaders
            trainer.fit(LightningTask(built.module), train_dataloaders=built.data.train_loader)
        else:
            trainer.fit(
                LightningTask(built.module), built.data.train_loader, built.data.eval_loaders
            )
        histories.append(built.module.history)
    assert len(histories[0]) == 6 and histories[0] == histories[1]


def test_cora_runs_are_deterministic_on_the_sparse_path(make_cfg, mirror, one_thread):
    """Cora's bag-of-words takes the sparse first layer: same seed, identical metrics."""
    cfg = make_cfg("dataset=cora", "model=gcn", "seed=1", "trainer.max_epochs=15", mirror=mirror)
    first, second = run_experiment(cfg), run_experiment(cfg)
    assert first.status == "ok", first.error
    assert first.history == second.history and first.metrics == second.metrics
    other = run_experiment(
        make_cfg("dataset=cora", "model=gcn", "seed=2", "trainer.max_epochs=15", mirror=mirror)
    )
    assert other.history != first.history


def test_one_hot_ids_warn_only_where_decay_outweighs_the_rows():
    eye = torch.eye(34)
    assert embedding_decay_warning(eye, 5e-4, n_train=20) is None  # Karate: 0.01
    warning = embedding_decay_warning(eye, 5e-4, n_train=6187)  # BlogCatalog: 3.1
    assert warning and "6187 training nodes" in warning
    assert embedding_decay_warning(eye, 5e-4) is not None  # unknown size: warned


def test_karate_default_run_logs_no_decay_warning(make_cfg, caplog):
    with caplog.at_level(logging.WARNING, logger="graphnetz"):
        record = run_experiment(make_cfg("dataset=karate", "model=gcn", "trainer.max_epochs=2"))
    assert record.status == "ok"
    assert "one-hot node ids" not in caplog.text


def test_accuracy_is_torchmetrics_micro_accuracy_exactly():
    from torchmetrics.functional.classification import multiclass_accuracy

    from graphnetz.tasks.node_tasks import accuracy

    g = torch.Generator().manual_seed(0)
    for n, classes in ((1, 3), (37, 4), (1000, 7), (2708, 7)):
        logits = torch.randn(n, classes, generator=g)
        y = torch.randint(0, classes, (n,), generator=g)
        theirs = multiclass_accuracy(logits, y, num_classes=classes, average="micro")
        assert accuracy(logits, y) == float(theirs)


def test_unset_num_threads_trains_small_graphs_on_one_thread(make_cfg):
    from types import SimpleNamespace

    from graphnetz.training.pipeline import build_run
    from graphnetz.training.resolve import resolve_run
    from graphnetz.training.threads import INITIAL_THREADS, SMALL_GRAPH_NODES, default_threads

    before = torch.get_num_threads()
    try:
        build_run(resolve_run(make_cfg("dataset=karate", "num_threads=null")))
        assert torch.get_num_threads() == 1
        big = SimpleNamespace(graph=SimpleNamespace(num_nodes=SMALL_GRAPH_NODES))
        assert default_threads(big) == INITIAL_THREADS
        assert default_threads(SimpleNamespace(graph=None)) == 1  # graph-level mini-batches
        build_run(resolve_run(make_cfg("dataset=karate", "num_threads=2")))
        assert torch.get_num_threads() == 2  # a configured count wins
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("optimizer", ["torch.optim.Adam", "torch.optim.AdamW"])
def test_multi_tensor_updates_equal_the_per_tensor_loop(make_cfg, tmp_path, optimizer):
    from graphnetz.training.pipeline import build_run
    from graphnetz.training.resolve import resolve_run

    common = ["dataset=karate", "model=gat", "trainer.max_epochs=15", "seed=2"]
    common.append(f"task.optimizer._target_={optimizer}")
    default = make_cfg(*common)
    assert build_run(resolve_run(default)).module.configure_optimizers().defaults["foreach"]
    multi = run_experiment(default, tmp_path / "multi")
    single = run_experiment(make_cfg(*common, "+task.optimizer.foreach=false"), tmp_path / "one")
    assert multi.status == single.status == "ok"
    assert multi.history == single.history


def test_graph_cache_keeps_the_structures_of_live_graphs_and_forgets_dead_ones():
    """Mini-batch epochs alternate new training batches with the same evaluation
    batches: each live graph's structure is built once, a changed or dead one is not
    reused, and the cache pickles without its weak references."""
    import gc
    import pickle

    from graphnetz.models.graph_cache import GraphCache

    cache, builds = GraphCache(), []

    def build(edge_index, num_nodes):
        builds.append(num_nodes)
        return edge_index.sum().item()

    evaluation = [torch.randint(0, 9, (2, 20)) for _ in range(3)]
    for _epoch in range(4):
        for _ in range(5):  # a new training batch each step, dropped after it
            cache.get(torch.randint(0, 9, (2, 30)), 9, build)
        for graph in evaluation:
            assert cache.get(graph, 9, build) == graph.sum().item()
    assert len(builds) == 4 * 5 + 3  # the evaluation graphs once, not once per epoch
    gc.collect()
    assert len(cache._live) == 3  # dead training batches left no entry behind
    evaluation[0][0, 0] += 1  # modified in place: rebuilt, with the new values
    assert cache.get(evaluation[0], 9, build) == evaluation[0].sum().item()
    assert cache.get(evaluation[1], 10, build) is not None  # another node count: rebuilt
    assert len(builds) == 4 * 5 + 3 + 2
    many = [torch.randint(0, 9, (2, 5)) for _ in range(3 * GraphCache.MAX_LIVE_GRAPHS)]
    for graph in many:
        cache.get(graph, 9, build)
    assert len(cache._live) == GraphCache.MAX_LIVE_GRAPHS  # bounded, oldest dropped
    copy = pickle.loads(pickle.dumps(cache))
    assert len(copy._live) == 0 and copy.get(many[-1], 9, build) == many[-1].sum().item()


def test_identity_memo_finds_by_identity_and_stamp_and_drops_the_oldest_beyond_its_bound():
    import gc
    import pickle

    from graphnetz.identity_memo import IdentityMemo

    memo = IdentityMemo(max_entries=2)
    a, b, c = torch.zeros(1), torch.zeros(1), torch.zeros(1)
    memo.put(a, "a", stamp=0)
    assert memo.get(a, 0) == "a" and memo.get(a, 1) is None  # a new stamp is a miss
    assert memo.get(torch.zeros(1), 0) is None  # equal but another object: a miss
    memo.put(b, "b")
    memo.put(a, "a2", stamp=0)  # renewed: now the newest
    memo.put(c, "c")
    assert b not in memo and memo.get(a, 0) == "a2" and memo.get(c) == "c"
    del c
    gc.collect()
    assert len(memo) == 1  # a dead object's entry goes with it
    copy = pickle.loads(pickle.dumps(memo))
    assert len(copy) == 0 and copy.max_entries == 2


def _directed_simple_graph(nodes: int, seed: int = 0) -> torch.Tensor:
    """Directed on purpose: a product whose backward skipped the transpose would show."""
    g = torch.Generator().manual_seed(seed)
    edges = torch.randint(0, nodes, (2, 5 * nodes), generator=g)
    edges = torch.unique(edges[:, edges[0] != edges[1]], dim=1)
    assert not torch.equal(torch.unique(edges.flip(0), dim=1), edges)
    return edges


def test_fixed_matrix_product_is_torch_sparse_mm_bit_for_bit_with_one_transpose(monkeypatch):
    """The GCN product's backward reuses one transpose per matrix: values and gradients
    are torch's own, exactly, and the conversion runs once for many backward passes."""
    from torch_geometric.nn.conv.gcn_conv import gcn_norm
    from torch_geometric.utils import to_torch_csr_tensor

    from graphnetz.models import sparse_products
    from graphnetz.models.sparse_products import fixed_matrix_product

    edges = _directed_simple_graph(300)
    adj, _ = gcn_norm(to_torch_csr_tensor(edges.flip(0), size=(300, 300)), None, 300)
    conversions = []
    original = sparse_products._Transposes.__call__

    def counting(self, matrix):
        conversions.append(matrix not in self._memo)
        return original(self, matrix)

    monkeypatch.setattr(sparse_products._Transposes, "__call__", counting)
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        h = torch.randn(300, 7, generator=g, requires_grad=True)
        grad = torch.randn(300, 7, generator=g)
        expected = torch.sparse.mm(adj, h)
        (expected_grad,) = torch.autograd.grad(expected, h, grad)
        out = fixed_matrix_product(adj, h)
        (out_grad,) = torch.autograd.grad(out, h, grad)
        assert torch.equal(out, expected) and torch.equal(out_grad, expected_grad)
    assert conversions == [True, False, False]


def test_gcn_on_a_csr_adjacency_has_gcn_conv_gradients_bit_for_bit():
    from torch_geometric.utils import to_torch_csr_tensor

    x, _ = _bag_of_words(words=12, density=0.5)
    adj_t = to_torch_csr_tensor(_directed_simple_graph(60).flip(0), size=(60, 60))
    torch.manual_seed(0)
    ours, theirs = CachedNormGCNConv(12, 4), GCNConv(12, 4)
    theirs.load_state_dict(ours.state_dict())
    grads = []
    for conv in (ours, theirs):
        for _ in range(2):  # the second step reuses the kept transpose
            out = conv(x, adj_t)
            conv.zero_grad()
            out.square().sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in conv.parameters()]))
    assert torch.equal(grads[0][0], grads[1][0])
    assert all(torch.equal(a, b) for a, b in zip(grads[0][1], grads[1][1], strict=True))
