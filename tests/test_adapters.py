"""Adapters: every node encoder enters every task type with the right output shapes."""

from __future__ import annotations

import pytest
import torch
from hydra import compose, initialize_config_dir

from graphnetz.config_dir import CONF_DIR
from graphnetz.models.adapters import (
    LinkPredictor,
    PooledEncoder,
    RelationalLinkPredictor,
    wrap_for_task,
)
from graphnetz.models.build import build_model, incompatibility
from graphnetz.models.gin import GIN

ENCODERS = ("gcn", "gat", "sage", "gt", "mlp")
X = torch.randn(7, 5)
EDGES = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6], [1, 0, 2, 1, 4, 3, 6, 5]])
BATCH = torch.tensor([0, 0, 0, 1, 1, 2, 2])


def model_cfg(name: str):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"model={name}"]).model


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_graph_tasks_through_a_pooling_head(name):
    model = build_model(model_cfg(name), "graph_cls", 5, 3)
    assert isinstance(model, PooledEncoder)
    assert model.eval()(X, EDGES, BATCH).shape == (3, 3)


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_link_prediction_with_a_dot_product(name):
    model = build_model(model_cfg(name), "link_pred", 5, 1).eval()
    assert isinstance(model, LinkPredictor)
    z = model.encode(X, EDGES)
    pairs = torch.tensor([[0, 3], [1, 5]])
    assert torch.allclose(model.decode(z, pairs), (z[[0, 3]] * z[[1, 5]]).sum(-1))


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_knowledge_graphs_with_distmult(name):
    model = build_model(model_cfg(name), "link_pred", 0, 1, num_nodes=7, num_relations=2).eval()
    assert isinstance(model, RelationalLinkPredictor)
    z = model.encode(None, EDGES)
    heads, rel, tails = torch.tensor([0, 3]), torch.tensor([1, 0]), torch.tensor([2, 6])
    r = model.relation_embedding(rel)
    expected = (z[heads] * r * z[tails]).sum(-1)  # <z_h, r, z_t>
    assert torch.allclose(model.decode(z, torch.stack([heads, tails]), rel), expected, atol=1e-5)
    assert torch.allclose(model.score_all_tails(z, heads, rel)[[0, 1], [2, 6]], expected, atol=1e-5)


def test_gin_is_graph_level_natively_and_refuses_node_and_link_tasks():
    model = wrap_for_task(lambda i, o: GIN(i, 16, o), GIN, "graph_reg", 5, 1)
    assert isinstance(model, GIN) and model.eval()(X, EDGES, BATCH).shape == (3, 1)
    for task in ("node_cls", "link_pred"):
        assert "does not support task type" in incompatibility(model_cfg("gin"), task)
    assert incompatibility(model_cfg("gin"), "graph_cls") is None


def test_unknown_task_type_names_the_valid_ones():
    with pytest.raises(ValueError, match="no adapter for task type 'edge_cls'.*graph_cls"):
        wrap_for_task(lambda i, o: GIN(i, 8, o), GIN, "edge_cls", 5, 1)
