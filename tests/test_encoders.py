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


@pytest.mark.parametrize("cls", [GCN, GAT, GraphTransformer, MLP])
def test_sparse_identity_features_equal_dense_ones(cls):
    """BlogCatalog-style one-hot node ids stay sparse and give the dense result."""
    torch.manual_seed(0)
    model = cls(4, 16, 3).eval()
    dense = torch.eye(4)
    assert torch.allclose(model(dense.to_sparse(), EDGES), model(dense, EDGES), atol=1e-6)


def test_graphsage_refuses_sparse_features_naming_the_alternative():
    with pytest.raises(ValueError, match="sage_sampled"):
        GraphSAGE(4, 16, 3)(torch.eye(4).to_sparse(), EDGES)


@pytest.mark.parametrize("kwargs, bad", [({"num_layers": 0}, "num_layers"),
                                          ({"dropout": 1.5}, "dropout"),
                                          ({"hidden_channels": 0}, "hidden_channels")])
def test_invalid_hyperparameters_name_the_value(kwargs, bad):
    with pytest.raises(ValueError, match=bad):
        GCN(5, **{"hidden_channels": 16, **kwargs})


def test_attention_heads_must_divide_hidden_size():
    with pytest.raises(ValueError, match="divisible"):
        GAT(5, hidden_channels=10, out_channels=3, heads=4)
