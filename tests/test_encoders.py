"""Node encoders: shapes, validation messages, and sparse one-hot features."""

from __future__ import annotations

import pytest
import torch

from graphnetz.models import GAT, GCN, MLP, GraphSAGE, GraphTransformer

EDGES = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])


@pytest.mark.parametrize("cls", [GCN, GAT, GraphSAGE, GraphTransformer, MLP])
def test_encoder_maps_nodes_to_outputs(cls):
    out = cls(5, 16, 3)(torch.randn(4, 5), EDGES)
    assert out.shape == (4, 3)


@pytest.mark.parametrize("cls", [GCN, GAT, GraphSAGE, GraphTransformer, MLP])
def test_sparse_identity_features_equal_dense_ones(cls):
    """BlogCatalog-style one-hot node ids stay sparse and give the dense result."""
    torch.manual_seed(0)
    model = cls(4, 16, 3).eval()
    dense = torch.eye(4)
    assert torch.allclose(model(dense.to_sparse(), EDGES), model(dense, EDGES), atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, bad",
    [
        ({"num_layers": 0}, "num_layers"),
        ({"dropout": 1.5}, "dropout"),
        ({"hidden_channels": 0}, "hidden_channels"),
    ],
)
def test_invalid_hyperparameters_name_the_value(kwargs, bad):
    with pytest.raises(ValueError, match=bad):
        GCN(5, **{"hidden_channels": 16, **kwargs})


def test_attention_heads_must_divide_hidden_size():
    with pytest.raises(ValueError, match="divisible"):
        GAT(5, hidden_channels=10, out_channels=3, heads=4)


def test_activation_between_layers_is_chosen_by_name():
    """activation=elu: ELU where ReLU was (the reference GAT's); the layers' outputs are
    the same, only the non-linearity between them differs; unknown names are refused."""
    import torch.nn.functional as F

    x = torch.randn(12, 5)
    edges = _random_simple_graph(12, 30, seed=4)
    torch.manual_seed(0)
    elu = GAT(5, hidden_channels=16, out_channels=3, heads=4, activation="elu").eval()
    torch.manual_seed(0)
    relu = GAT(5, hidden_channels=16, out_channels=3, heads=4).eval()
    hidden = elu.layers[0](x, edges)
    assert torch.equal(elu(x, edges), elu.layers[1](F.elu(hidden), edges))
    assert torch.equal(relu(x, edges), relu.layers[1](F.relu(hidden), edges))
    assert not torch.equal(elu(x, edges), relu(x, edges))
    with pytest.raises(
        ValueError, match=r"activation must be one of \['elu', 'relu'\], got 'tanh'"
    ):
        GCN(5, hidden_channels=8, activation="tanh")


@pytest.mark.parametrize("cls", [GAT, GraphTransformer])
def test_head_channels_widen_the_heads_not_the_output(cls):
    """heads x head_channels hidden layers into a hidden_channels output: the reference
    paper's attention encoders; with the classes as output the same network as
    hidden_channels = heads x head_channels (same parameters, same outputs)."""
    x = torch.randn(12, 5)
    edges = _random_simple_graph(12, 30, seed=3)
    torch.manual_seed(0)
    wide = cls(5, hidden_channels=16, heads=4, head_channels=8)
    assert wide(x, edges).shape == (12, 16)  # the embedding stays hidden_channels wide
    assert wide.layers[0].heads * wide.layers[0].out_channels == 32
    torch.manual_seed(0)
    a = cls(5, hidden_channels=99, out_channels=3, heads=4, head_channels=8).eval()
    torch.manual_seed(0)
    b = cls(5, hidden_channels=32, out_channels=3, heads=4).eval()
    assert [p.shape for p in a.parameters()] == [p.shape for p in b.parameters()]
    assert torch.equal(a(x, edges), b(x, edges))
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="head_channels"):
            cls(5, hidden_channels=16, heads=4, head_channels=bad)


def _random_simple_graph(num_nodes: int, num_edges: int, seed: int) -> torch.Tensor:
    from torch_geometric.utils import coalesce, remove_self_loops

    gen = torch.Generator().manual_seed(seed)
    edges = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    return coalesce(remove_self_loops(edges)[0], num_nodes=num_nodes)


def _assert_same_outputs_and_gradients(build_a, build_b, x, edges, grad_atol=1e-4):
    """Build both modules from the same seed, run them on the same dropout draws, and
    compare outputs and parameter gradients."""
    results = []
    for build in (build_a, build_b):
        torch.manual_seed(1)
        module = build()
        torch.manual_seed(2)
        out = module(x, edges)
        out.square().sum().backward()
        results.append((out.detach(), [p.grad for p in module.parameters()]))
    (out_a, grads_a), (out_b, grads_b) = results
    assert torch.allclose(out_a, out_b, atol=1e-5)
    for a, b in zip(grads_a, grads_b, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=grad_atol)


@pytest.mark.parametrize(
    ("cls", "kwargs"), [(GCN, {}), (GraphSAGE, {}), (GraphSAGE, {"aggr": "sum"})]
)
def test_sparse_aggregation_gives_the_edge_index_values_and_gradients(cls, kwargs):
    """GCN and mean/sum SAGE run on a cached CSR adjacency; a directed simple graph
    must give the per-edge scatter's outputs and gradients, dropout included."""
    edges = _random_simple_graph(200, 1500, seed=0)
    x = torch.randn(200, 12)

    def build(sparse: bool):
        model = cls(12, 16, 5, **kwargs)
        model.sparse_aggregation = sparse
        return model

    _assert_same_outputs_and_gradients(lambda: build(True), lambda: build(False), x, edges)


def test_graphs_with_self_loops_or_repeated_edges_keep_edge_index():
    """PyG counts loops and repeats differently for sparse matrices: such graphs must
    not switch, so GCN gives exactly the edge_index result."""
    from graphnetz.models.graph_cache import AdjacencyCache

    loopy = torch.cat([EDGES, torch.tensor([[0, 1], [0, 2]])], dim=1)  # a loop, a repeat
    assert AdjacencyCache().adjacency(loopy, 4) is loopy
    assert AdjacencyCache().adjacency(EDGES, 4).layout == torch.sparse_csr
    torch.manual_seed(0)
    model = GCN(5, 8, 3).eval()
    x = torch.randn(4, 5)
    via_cache = model(x, loopy)
    model.sparse_aggregation = False
    assert torch.equal(via_cache, model(x, loopy))


@pytest.mark.parametrize("concat", [True, False])
@pytest.mark.parametrize("training", [False, True])
def test_sorted_gat_conv_is_pyg_gat_conv_values_gradients_and_dropout(concat, training):
    """Same parameters, same seed: the sorted-layout GAT layer reproduces GATConv,
    attention dropout included (same draws on the same edge order)."""
    from torch_geometric.nn import GATConv

    from graphnetz.models.gat_conv import SortedGATConv

    edges = _random_simple_graph(150, 1200, seed=3)
    x = torch.randn(150, 10)
    builders = [
        lambda cls=cls: cls(10, 6, heads=4, concat=concat, dropout=0.6).train(training)
        for cls in (SortedGATConv, GATConv)
    ]
    _assert_same_outputs_and_gradients(*builders, x, edges, grad_atol=1e-3)


def test_sorted_gat_conv_leaves_loopy_graphs_to_pyg():
    from torch_geometric.nn import GATConv

    from graphnetz.models.gat_conv import SortedGATConv

    loopy = torch.cat([EDGES, torch.tensor([[0, 1], [0, 2]])], dim=1)
    x = torch.randn(4, 5)
    torch.manual_seed(0)
    ref = GATConv(5, 3, heads=2).eval()
    torch.manual_seed(0)
    fast = SortedGATConv(5, 3, heads=2).eval()
    assert torch.equal(fast(x, loopy), ref(x, loopy))


def test_target_segment_softmax_is_pyg_softmax_bit_for_bit():
    from torch_geometric.utils import softmax

    from graphnetz.models.gat_conv import TargetSegments

    edges = _random_simple_graph(150, 1200, seed=4)
    loops = torch.arange(150)
    edges = torch.cat([edges, torch.stack([loops, loops])], dim=1)
    alpha = (torch.randn(edges.size(1), 4) * 5).requires_grad_()
    upstream = torch.randn(edges.size(1), 4)
    ours = TargetSegments(edges[1], 150).softmax(alpha)
    (ours_grad,) = torch.autograd.grad(ours, alpha, upstream)
    theirs = softmax(alpha, edges[1], num_nodes=150)
    (theirs_grad,) = torch.autograd.grad(theirs, alpha, upstream)
    assert torch.equal(ours, theirs) and torch.equal(ours_grad, theirs_grad)


@pytest.mark.parametrize("name", ["GCN", "GraphSAGE", "GAT", "GraphTransformer", "MLP"])
def test_input_dropout_can_be_left_out(name):
    """``input_dropout=False`` drops only between layers (the reference encoders' way):
    a one-layer stack in training mode then computes its evaluation output."""
    import graphnetz.models as models

    cls = getattr(models, name)
    x, edges = torch.randn(40, 6), _random_simple_graph(40, 120, seed=5)
    kwargs = {"heads": 2, "attn_dropout": 0.0} if name in ("GAT", "GraphTransformer") else {}
    torch.manual_seed(0)
    kept = cls(6, 4, 3, num_layers=1, dropout=0.5, input_dropout=False, **kwargs)
    with torch.no_grad():
        assert torch.equal(kept.train()(x, edges), kept.eval()(x, edges))
        dropped = cls(6, 4, 3, num_layers=1, dropout=0.5, **kwargs).train()
        assert not torch.equal(dropped(x, edges), dropped.eval()(x, edges))
    with pytest.raises(ValueError, match="input_dropout must be true or false"):
        cls(6, 4, 3, input_dropout="no", **kwargs)
