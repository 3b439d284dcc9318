"""The Python API's catalogue and registries: tasks from configs and user data, user models."""

from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf
from torch import nn
from torch_geometric.data import Data

from graphnetz import (
    BenchmarkTask,
    iter_benchmark_tasks,
    list_datasets,
    register_model,
    register_task,
    run_benchmark,
    task_from_dataset,
    unregister_task,
    wrap_encoder,
)
from graphnetz.api.benchmark import select_models, settings_of
from graphnetz.api.models import model_spec, registered_models, unregister_model
from graphnetz.config_dir import CONF_DIR


def tiny_graph(masks: bool = True, y: bool = True) -> Data:
    """A 6-node path graph with 3 features and 2 classes."""
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 4, 5], [1, 0, 2, 1, 3, 2, 4, 3, 5, 4]])
    data = Data(x=torch.eye(6, 3), edge_index=edge_index, num_nodes=6)
    if y:
        data.y = torch.tensor([0, 0, 0, 1, 1, 1])
    if masks:
        data.train_mask = torch.tensor([1, 0, 0, 0, 0, 1], dtype=torch.bool)
        data.val_mask = torch.tensor([0, 1, 0, 0, 1, 0], dtype=torch.bool)
        data.test_mask = torch.tensor([0, 0, 1, 1, 0, 0], dtype=torch.bool)
    return data


class Encoder(nn.Module):
    """A plain node encoder: forward(x, edge_index) -> [N, out_channels]."""

    def __init__(
        self, in_channels: int, hidden_channels: int = 8, out_channels: int = 2, scale: float = 1.0
    ) -> None:
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x, edge_index):
        return self.lin(x)


# ---------------------------------------------------------------- catalogue from configs
def test_a_dataset_config_gives_one_task_per_task_type_default_first():
    karate = [t for t in iter_benchmark_tasks() if t.name == "karate"]
    # conf/dataset/karate.yaml: task_types [node_cls, link_pred], default node_cls, 100 epochs
    assert [(t.task_type, t.epochs, t.category) for t in karate] == [
        ("node_cls", 100, "social"),
        ("link_pred", 100, "social"),
    ]
    assert karate[0].key == "karate/node_cls"
    assert karate[0].loader == {"_target_": "graphnetz.data.pyg.load_karate"}
    assert karate[0].split == {"type": "random", "train": 0.6, "val": 0.2}


def test_every_dataset_config_is_in_the_catalogue():
    names = {OmegaConf.load(p).name for p in (CONF_DIR / "dataset").glob("*.yaml")}
    assert {t.name for t in iter_benchmark_tasks()} == names


def test_filters_by_category_and_task_type():
    graph_tasks = list(iter_benchmark_tasks(task_type="graph_cls"))
    assert graph_tasks and {t.task_type for t in graph_tasks} == {"graph_cls"}
    social_links = {t.name for t in iter_benchmark_tasks("social", "link_pred")}
    assert {"cora", "karate"} <= social_links


def test_unknown_category_or_task_type_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown category 'socail'.*'social'"):
        list(iter_benchmark_tasks("socail"))
    with pytest.raises(ValueError, match=r"unknown task type 'node'.*'node_cls'"):
        list(iter_benchmark_tasks(task_type="node"))


def test_list_datasets_is_category_to_task_type_to_datasets():
    table = list_datasets()
    social = table[table["category"] == "social"].set_index("task_type")["datasets"]
    assert {"cora", "citeseer", "pubmed", "karate"} <= set(social["node_cls"])
    assert "karate" in social["link_pred"]


# ---------------------------------------------------------------- user tasks
def test_register_then_unregister_leaves_the_catalogue_exactly_as_before():
    before = list_datasets()
    before_tasks = [(t.key, t.category) for t in iter_benchmark_tasks()]
    register_task("toys", task_from_dataset("path6", "node_cls", tiny_graph(), epochs=3))
    register_task("social", task_from_dataset("path6_links", "link_pred", tiny_graph()))
    assert ("path6/node_cls", "toys") in [(t.key, t.category) for t in iter_benchmark_tasks()]
    assert [t.name for t in iter_benchmark_tasks("toys")] == ["path6"]
    unregister_task("toys", "path6")
    unregister_task("social", "path6_links")
    assert [(t.key, t.category) for t in iter_benchmark_tasks()] == before_tasks
    assert list_datasets().equals(before)


def test_unregister_an_unknown_task_returns_none_and_removes_nothing():
    registered = register_task("toys", task_from_dataset("path6", "node_cls", tiny_graph()))
    try:
        assert unregister_task("toys", "path7") is None
        assert unregister_task("games", "path6") is None
        assert [t.key for t in iter_benchmark_tasks("toys")] == ["path6/node_cls"]
    finally:
        assert unregister_task("toys", "path6") is registered


def test_a_task_key_cannot_be_registered_twice():
    with pytest.raises(ValueError, match="'karate/node_cls' already exists"):
        register_task("social", task_from_dataset("karate", "node_cls", tiny_graph()))


def test_task_from_dataset_keeps_what_it_was_given():
    task = task_from_dataset("path6", "node_cls", tiny_graph(masks=False), epochs=7, split="random")
    assert isinstance(task, BenchmarkTask)
    assert (task.name, task.task_type, task.epochs, task.split) == (
        "path6",
        "node_cls",
        7,
        {"type": "random"},
    )
    assert task.key == "path6/node_cls" and task.category == "custom"


def test_seed_taking_callables_are_recognised():
    def per_seed(seed):
        return tiny_graph()

    assert task_from_dataset("a", "node_cls", per_seed).seeded
    assert not task_from_dataset("b", "node_cls", tiny_graph).seeded


# ---------------------------------------------------------------- missing attributes
def test_node_cls_without_masks_names_them_and_the_random_split():
    with pytest.raises(
        ValueError,
        match=r"'node_cls' misses attribute\(s\) \['train_mask', "
        r"'val_mask', 'test_mask'\].*split='random'",
    ):
        task_from_dataset("path6", "node_cls", tiny_graph(masks=False))


def test_link_pred_without_edge_index_is_refused():
    with pytest.raises(ValueError, match=r"'link_pred' misses attribute\(s\) \['edge_index'\]"):
        task_from_dataset("points", "link_pred", Data(x=torch.ones(4, 2)))


def test_graph_cls_without_labels_is_refused():
    graphs = [tiny_graph(masks=False, y=False) for _ in range(4)]
    with pytest.raises(ValueError, match=r"'graph_cls' misses attribute\(s\) \['y'\]"):
        task_from_dataset("paths", "graph_cls", graphs)


def test_graph_cls_on_a_single_graph_is_refused():
    with pytest.raises(ValueError, match="needs a list or Dataset of graphs"):
        task_from_dataset("path6", "graph_cls", tiny_graph())


def test_bad_task_type_epochs_and_kinds_name_the_valid_choices():
    with pytest.raises(ValueError, match=r"unknown task type 'node'.*'node_cls'"):
        task_from_dataset("g", "node", tiny_graph())
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        task_from_dataset("g", "node_cls", tiny_graph(), epochs=0)
    with pytest.raises(TypeError, match="Data object, a list/Dataset of graphs"):
        task_from_dataset("g", "node_cls", 42)


# ---------------------------------------------------------------- user models
def test_decorator_registers_one_or_a_set_of_task_types():
    @register_model(task_type="node_cls")
    class One(Encoder):
        pass

    @register_model(task_type={"node_cls", "link_pred"}, name="Two")
    class Two(Encoder):
        pass

    try:
        assert registered_models()["One"].task_types == {"node_cls"}
        assert registered_models()["Two"].task_types == {"node_cls", "link_pred"}
        assert model_spec("Mine", Two).task_types == {"node_cls", "link_pred"}  # found by class
        assert model_spec("Mine", "One").cls is One  # found by name
    finally:
        unregister_model("One")
        unregister_model("Two")
    assert "One" not in registered_models()


def test_a_task_types_attribute_declares_the_model():
    class Declared(Encoder):
        task_types = {"graph_cls"}

    assert model_spec("D", Declared).task_types == {"graph_cls"}


def test_an_inline_tuple_builds_through_its_factory():
    spec = model_spec("T", (Encoder, "node_cls", lambda i, h, o: Encoder(i, h, o, scale=2.0)))
    model = spec.model_factory({"name": "T", "hidden_channels": 16}).build(3, 16, 5)
    assert spec.task_types == {"node_cls"} and model.lin.out_features == 5


def test_sizes_go_by_keyword_when_the_constructor_names_them():
    class OutFirst(nn.Module):  # the GraphModel contract's order: (in, out, hidden)
        task_types = {"node_cls"}

        def __init__(self, in_channels, out_channels, hidden_channels=8, scale=1.0):
            super().__init__()
            self.sizes = (in_channels, hidden_channels, out_channels, scale)

    class Positional(nn.Module):  # the reference's order, any names
        task_types = {"node_cls"}

        def __init__(self, d_in, d_hidden, d_out, scale=1.0):
            super().__init__()
            self.sizes = (d_in, d_hidden, d_out, scale)

    for cls in (OutFirst, Positional):
        spec = model_spec("M", cls)
        node = spec.config_node()
        assert node["hidden_channels"] == (8 if cls is OutFirst else 64) and node["scale"] == 1.0
        model = spec.model_factory({**node, "scale": 2.0}).build(3, 16, 5)
        assert model.sizes == (3, 16, 5, 2.0)


def test_an_undeclared_class_says_how_to_declare_it():
    with pytest.raises(
        ValueError,
        match=r"register_model\(task_type=...\).*task_types.*\(cls, task_type, factory\)",
    ):
        model_spec("E", Encoder)


def test_unknown_task_types_are_listed():
    with pytest.raises(ValueError, match=r"unknown task type\(s\) \['nodes'\]; valid"):
        register_model(Encoder, task_type="nodes")


def test_class_hyperparameters_become_overridable_config_keys():
    spec = model_spec("D", (Encoder, "node_cls", Encoder))
    assert spec.hyperparameters() == {"hidden_channels": 64}  # factories take (in, hidden, out)
    declared = type("Declared", (Encoder,), {"task_types": {"node_cls"}})
    assert model_spec("D", declared).hyperparameters() == {"hidden_channels": 8, "scale": 1.0}


def test_models_may_name_conf_yamls_or_classes_with_one():
    from graphnetz.models import GCN

    chosen = dict(select_models({"GCN": "gcn", "Same": GCN}))
    assert chosen == {"GCN": "gcn", "Same": "gcn"}  # a class with a conf/model YAML uses it
    with pytest.raises(ValueError, match=r"unknown model 'gnc'; conf/model: \[.*'gcn'"):
        select_models({"X": "gnc"})


# ---------------------------------------------------------------- wrap_encoder
def test_wrap_encoder_gives_each_task_type_its_head():
    graph = tiny_graph()
    node = wrap_encoder(Encoder, "node_cls", 3, 2)
    assert node(graph.x, graph.edge_index).shape == (6, 2)
    pooled = wrap_encoder(Encoder, "graph_cls", 3, 4, hidden_channels=8)
    batch = torch.tensor([0, 0, 0, 1, 1, 1])
    assert pooled(graph.x, graph.edge_index, batch).shape == (2, 4)  # one row per graph
    link = wrap_encoder(lambda i, h, o: Encoder(i, h, o), "link_pred", 3, 1, hidden_channels=8)
    z = link.encode(graph.x, graph.edge_index)
    pairs = torch.tensor([[0, 1], [2, 3]])
    assert z.shape == (6, 8)
    assert torch.allclose(link.decode(z, pairs), (z[[0, 1]] * z[[2, 3]]).sum(-1))


# ---------------------------------------------------------------- settings
def test_hydra_override_strings_and_dotted_keys_give_the_same_settings():
    strings = settings_of(["task.lr=5e-3", "model.name='a b'", "x.y=[1,2]"], {})
    assert strings == {"task.lr": 0.005, "model.name": "a b", "x.y": [1, 2]}
    assert settings_of({"task.lr": 0.005}, {"trainer.max_epochs": 3}) == {
        "task.lr": 0.005,
        "trainer.max_epochs": 3,
    }


def test_settings_owned_by_run_benchmark_are_refused():
    with pytest.raises(ValueError, match="use seeds= instead"):
        settings_of(["seed=3"], {})
    with pytest.raises(ValueError, match="single values"):
        settings_of(["task.lr=0.1,0.2"], {})
    with pytest.raises(ValueError, match="not both"):
        run_benchmark(models=["gcn"], tasks=["karate"], epochs=3, **{"trainer.max_epochs": 3})
