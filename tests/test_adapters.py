"""Adapters: every node encoder enters every task type with the right output shapes."""

from __future__ import annotations

import pytest
import torch
from hydra import compose, initialize_config_dir
from torch import nn

from graphnetz.config_dir import CONF_DIR
from graphnetz.models import GCN
from graphnetz.models.adapters import (
    ADAPTERS,
    LinkPredictor,
    PooledEncoder,
    RelationalLinkPredictor,
    adapt,
)
from graphnetz.models.contract import GraphModel, capabilities
from graphnetz.models.gin import GIN
from graphnetz.models.multilabel import LANC, DeepWalk
from graphnetz.task_types import LEVELS, TASK_TYPES
from graphnetz.tasks import TASK_CLASSES, task_class
from graphnetz.training.build import build_model, incompatibility

ENCODERS = ("gcn", "gat", "sage", "gt", "mlp")
X = torch.randn(7, 5)
EDGES = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6], [1, 0, 2, 1, 4, 3, 6, 5]])
BATCH = torch.tensor([0, 0, 0, 1, 1, 2, 2])


def model_cfg(name: str):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[f"model={name}"]).model


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_graph_tasks_through_a_pooling_head(name):
    model = build_model(model_cfg(name), "graph", 5, 3)
    assert isinstance(model, PooledEncoder)
    assert model.eval()(X, EDGES, BATCH).shape == (3, 3)


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_link_prediction_with_a_dot_product(name):
    model = build_model(model_cfg(name), "link", 5, 1).eval()
    assert isinstance(model, LinkPredictor)
    z = model.encode(X, EDGES)
    pairs = torch.tensor([[0, 3], [1, 5]])
    assert torch.allclose(model.decode(z, pairs), (z[[0, 3]] * z[[1, 5]]).sum(-1))


@pytest.mark.parametrize("name", ENCODERS)
def test_node_encoder_serves_knowledge_graphs_with_distmult(name):
    model = build_model(
        model_cfg(name), "relational_link", 0, 1, num_nodes=7, num_relations=2
    ).eval()
    assert isinstance(model, RelationalLinkPredictor)
    z = model.encode(None, EDGES)
    heads, rel, tails = torch.tensor([0, 3]), torch.tensor([1, 0]), torch.tensor([2, 6])
    r = model.relation_embedding(rel)
    expected = (z[heads] * r * z[tails]).sum(-1)  # <z_h, r, z_t>
    assert torch.allclose(model.decode(z, torch.stack([heads, tails]), rel), expected, atol=1e-5)
    assert torch.allclose(model.score_all_tails(z, heads, rel)[[0, 1], [2, 6]], expected, atol=1e-5)


def test_gin_is_graph_level_natively_and_refuses_node_and_link_tasks():
    model = adapt(lambda i, o: GIN(i, 16, o), GIN, "graph", 5, 1)
    assert isinstance(model, GIN) and model.eval()(X, EDGES, BATCH).shape == (3, 1)
    for task in ("node_cls", "link_pred"):
        assert "does not support task type" in incompatibility(model_cfg("gin"), task)
    assert incompatibility(model_cfg("gin"), "graph_cls") is None


def test_unknown_level_names_the_valid_ones():
    with pytest.raises(ValueError, match="no adapter for level 'edge'.*'graph'"):
        adapt(lambda i, o: GIN(i, 8, o), GIN, "edge", 5, 1)


def test_every_level_has_an_adapter_and_every_task_type_a_class():
    assert set(ADAPTERS) == set(LEVELS)
    assert tuple(TASK_CLASSES) == TASK_TYPES
    assert all(task_class(t).task_type == t and task_class(t).level() in LEVELS for t in TASK_TYPES)
    with pytest.raises(ValueError, match="unknown task type 'edge_cls'.*'graph_cls'"):
        task_class("edge_cls")


def test_capabilities_are_read_from_the_declarations_in_one_place():
    assert capabilities(GCN).task_types == frozenset(TASK_TYPES)
    assert capabilities(GIN).graph_level and not capabilities(GIN).serves("node_cls")
    assert capabilities(LANC).computes_selected_nodes and not capabilities(GCN).precomputes
    walk = capabilities(DeepWalk)
    assert walk.precomputes and not walk.uses_node_features and not walk.adds_loss


def test_a_module_outside_the_contract_gets_the_defaults():
    caps = capabilities(nn.Linear)
    assert caps.task_types is None and caps.serves("graph_reg")
    assert not (caps.graph_level or caps.precomputes or caps.adds_loss)
    assert caps.uses_node_features


def test_a_task_class_must_declare_a_known_task_type():
    from graphnetz.tasks.base import GraphTask

    with pytest.raises(TypeError, match="'edge_cls' is not a declared task type"):
        type("EdgeTask", (GraphTask,), {"task_type": "edge_cls"})
    assert issubclass(DeepWalk, GraphModel)
