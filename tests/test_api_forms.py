"""Each usage form of the reference package (graphnetz 0.2.0), written as its users write it:
models with ``forward(self, data)``, imports from ``graphnetz`` and ``graphnetz.benchmark``."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import torch
from torch import nn
from torch_geometric.datasets import KarateClub
from torch_geometric.nn import GCNConv, global_mean_pool

from graphnetz import (
    GAT,
    GCN,
    GIN,
    GraphSAGE,
    GraphTransformer,
    iter_benchmark_tasks,
    register_model,
    register_task,
    run_benchmark,
    task_from_dataset,
    unregister_task,
)
from graphnetz.api.benchmark import BenchmarkFailed
from graphnetz.api.models import unregister_model
from graphnetz.benchmark import Task, _multi_task_factory
from graphnetz.benchmark import register_model as register_model_from_benchmark
from graphnetz.data.tu import load_tudataset
from graphnetz.models.adapters import adapt
from graphnetz.models.contract import forward_takes_data

FEW = {"progress": False, "trainer.accelerator": "cpu"}

pytestmark = pytest.mark.usefixtures("one_thread")  # small, shared machines


class TinyGCN(torch.nn.Module):
    """The reference paper's first model: ``forward(self, data)``."""

    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels)
        self.conv2 = GCNConv(hidden_channels, out_channels)

    def forward(self, data):
        x = torch.relu(self.conv1(data.x, data.edge_index))
        return self.conv2(x, data.edge_index)


def karate(root, *, seed):
    """A reference-style ``Task`` loader: Karate with a 60/20/20 split drawn from ``seed``."""
    data = KarateClub()[0]
    order = torch.randperm(data.num_nodes, generator=torch.Generator().manual_seed(seed))
    masks = torch.zeros(3, data.num_nodes, dtype=torch.bool)
    for i, part in enumerate((order[:20], order[20:27], order[27:])):
        masks[i, part] = True
    data.train_mask, data.val_mask, data.test_mask = masks
    return data


@pytest.fixture
def mutag(mirror, data_dir):
    return load_tudataset(data_dir, mirror, name="MUTAG")


# ---------------------------------------------------------------- the paper's first example
def test_the_papers_first_example_runs_every_social_node_task_available_offline(
    monkeypatch, mirror, data_dir, capsys
):
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(mirror))  # the user's offline mirror

    @register_model(task_type={"node_cls"})
    class TinyGCN(torch.nn.Module):
        def __init__(self, in_channels, hidden_channels, out_channels):
            super().__init__()
            self.conv1 = GCNConv(in_channels, hidden_channels)
            self.conv2 = GCNConv(hidden_channels, out_channels)

        def forward(self, data):
            x = torch.relu(self.conv1(data.x, data.edge_index))
            return self.conv2(x, data.edge_index)

    try:  # as written, but 2 epochs and the session's data folder
        report = run_benchmark(
            "social", {"TinyGCN": TinyGCN}, task_type="node_cls", seeds=(0, 1), epochs=2,
            root=data_dir,
        )  # fmt: skip
    finally:
        unregister_model("TinyGCN")
    printed = capsys.readouterr().out
    unavailable = set(re.findall(r"^unavailable: (\S+):", printed, re.M))
    summary = report.summary()
    social = {t.key for t in iter_benchmark_tasks("social", "node_cls")}  # from the YAMLs
    assert set(summary["task"]) | unavailable == social
    assert not set(summary["task"]) & unavailable
    assert "pubmed/node_cls" in unavailable  # not in the mirror, no network
    assert {"cora/node_cls", "citeseer/node_cls", "karate/node_cls"} <= set(summary["task"])
    assert set(summary["model"]) == {"TinyGCN"} and set(summary["n"]) == {2}
    assert printed.index("TinyGCN") < printed.index("unavailable: pubmed/node_cls")


# ---------------------------------------------------------------- model forms
def test_a_decorated_data_forward_model_runs_by_category(data_dir):
    @register_model(task_type={"node_cls"})
    class Decorated(TinyGCN):
        pass

    register_task("toys", Task("club", "node_cls", karate, epochs=3))
    try:
        report = run_benchmark("toys", {"Tiny": Decorated}, seeds=(0, 1), root=data_dir, **FEW)
    finally:
        unregister_task("toys", "club")
        unregister_model("Decorated")
    assert report.failed == []
    assert list(report.summary()[["task", "model", "n"]].itertuples(index=False, name=None)) == [
        ("club/node_cls", "Tiny", 2)
    ]


def test_a_task_types_class_attribute_declares_the_model(data_dir):
    class Declared(TinyGCN):
        task_types = {"node_cls"}

    tasks = [Task("club", "node_cls", karate, epochs=3), Task("links", "link_pred", karate)]
    report = run_benchmark(
        models={"Declared": Declared}, tasks=tasks, seeds=(0,), root=data_dir, **FEW
    )
    assert list(report.summary()["task"]) == ["club/node_cls"]
    assert [(r["task"], r["model"]) for r in report.skipped] == [("links/link_pred", "Declared")]


def test_an_inline_tuple_builds_through_its_factory(data_dir):
    built = []

    class WithDropout(TinyGCN):
        def __init__(self, in_channels, hidden_channels, out_channels, dropout=0.5):
            super().__init__(in_channels, hidden_channels, out_channels)
            built.append((hidden_channels, dropout))

    cls = WithDropout
    models = {"Inline": (cls, "node_cls", lambda i, h, o: cls(i, h, o, dropout=0.3))}
    run_benchmark(
        models=models,
        tasks=[Task("club", "node_cls", karate, epochs=2)],
        seeds=(0,),
        root=data_dir,
        **FEW,
    )
    assert built == [(64, 0.3)]  # the reference's default width, the factory's dropout


def test_multi_task_factory_serves_node_graph_and_link_tasks(mutag, data_dir):
    class Encoder(TinyGCN):
        pass

    register_model_from_benchmark(
        Encoder,
        task_type={"node_cls", "graph_cls", "link_pred"},
        factory=_multi_task_factory(Encoder),
    )
    tasks = [
        Task("club", "node_cls", karate, epochs=2),
        Task("club_links", "link_pred", karate, epochs=2),
        task_from_dataset("mutag", "graph_cls", mutag, epochs=2),
    ]
    try:
        report = run_benchmark(
            models={"Enc": Encoder}, tasks=tasks, seeds=(0,), root=data_dir, **FEW
        )
    finally:
        unregister_model("Encoder")
    assert report.failed == [] and report.skipped == []
    metrics = dict(zip(report.summary()["task"], report.summary()["metric"], strict=True))
    assert metrics == {
        "club/node_cls": "accuracy",
        "club_links/link_pred": "auc",
        "mutag/graph_cls": "accuracy",
    }


# ---------------------------------------------------------------- task forms
def test_task_from_dataset_runs_gin_and_a_graph_level_data_model_on_mutag(mutag, data_dir):
    class MeanPool(nn.Module):
        task_types = {"graph_cls"}
        graph_level = True  # forward(data) uses data.batch itself

        def __init__(self, in_channels, hidden_channels, out_channels):
            super().__init__()
            self.lin = nn.Linear(in_channels, out_channels)

        def forward(self, data):
            return global_mean_pool(self.lin(data.x), data.batch)

    tasks = [task_from_dataset("mutag", "graph_cls", mutag, epochs=2)]
    models = {"GIN": GIN, "Pool": MeanPool}
    report = run_benchmark(models=models, tasks=tasks, seeds=(0, 1), root=data_dir, **FEW)
    summary = report.summary()
    assert list(zip(summary["model"], summary["n"], strict=True)) == [
        ("GIN", 2),
        ("Pool", 2),
    ]


def test_a_task_loader_receives_the_root_and_each_run_seed(data_dir):
    calls = []

    def loader(root, *, seed):
        calls.append((root, seed))
        return karate(root, seed=seed)

    task = Task("club", "node_cls", loader, epochs=2)
    models = {"A": (TinyGCN, "node_cls"), "B": "gcn"}
    run_benchmark(models=models, tasks=[task], seeds=(3, 7), root=data_dir, **FEW)
    assert calls == [(str(data_dir / "club"), 3), (str(data_dir / "club"), 7)]  # shared by A, B


def test_a_loader_whose_first_parameter_has_a_default_gets_no_root(data_dir):
    # KarateClub(transform=None): the data directory is not a transform
    task = Task("kc", "node_cls", KarateClub, epochs=2, split="random")
    report = run_benchmark(models={"G": "gcn"}, tasks=[task], seeds=(0,), root=data_dir, **FEW)
    assert list(report.summary()["n"]) == [1]


def test_the_same_seed_gives_the_same_metric(data_dir):
    def once():
        task = Task("club", "node_cls", karate, epochs=3)
        report = run_benchmark(
            models={"T": (TinyGCN, "node_cls")}, tasks=[task], seeds=(5,), root=data_dir, **FEW
        )
        return report.summary()["mean"].tolist()

    assert once() == once()


# ---------------------------------------------------------------- imports
def test_the_reference_names_import_from_graphnetz_and_graphnetz_benchmark():
    import graphnetz
    import graphnetz.models as ours

    assert (GCN, GAT, GIN, GraphSAGE, GraphTransformer) == (
        ours.GCN,
        ours.GAT,
        ours.GIN,
        ours.GraphSAGE,
        ours.GraphTransformer,
    )
    assert register_model_from_benchmark is graphnetz.register_model
    data = karate(None, seed=0)
    out = GCN(data.num_features, 16, 4)(data.x, data.edge_index)  # (in, hidden, out)
    assert out.shape == (data.num_nodes, 4)


def test_graphnetz_benchmark_is_reachable_as_an_attribute_too():
    code = "import graphnetz; print(graphnetz.benchmark.Task is graphnetz.Task)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_one_model_may_be_passed_without_a_dict(data_dir):
    task = Task("club", "node_cls", karate, epochs=2)
    report = run_benchmark(
        models=(TinyGCN, "node_cls"), tasks=[task], seeds=(0,), root=data_dir, **FEW
    )
    assert list(report.summary()["model"]) == ["TinyGCN"]  # named after its class


def test_importing_graphnetz_loads_neither_torch_nor_hydra():
    code = "import sys, graphnetz; print(sorted({'torch', 'hydra'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("forward", "takes_data"),
    [
        ("def forward(self, data): ...", True),
        ("def forward(self, batch, extra=None): ...", True),
        ("def forward(self, x, edge_index): ...", False),
        ("def forward(self, x): ...", False),
        ("def forward(self, x, edge_index, batch): ...", False),
    ],
)
def test_a_data_forward_is_told_from_the_signature(forward, takes_data):
    namespace: dict = {}
    exec(f"class M:\n    {forward}", namespace)
    assert forward_takes_data(namespace["M"]) is takes_data
    assert forward_takes_data(GCN) is False


def test_the_adapters_call_a_data_forward_model_at_every_level():
    data = karate(None, seed=0)
    encoder = lambda i, o: TinyGCN(i, 8, o)  # noqa: E731
    node = adapt(encoder, TinyGCN, "node", data.num_features, 4)
    expected = node.model(data)  # the model called directly with the Data object
    assert torch.equal(node(data.x, data.edge_index), expected)
    pooled = adapt(encoder, TinyGCN, "graph", data.num_features, 3, hidden_channels=8)
    batch = torch.zeros(data.num_nodes, dtype=torch.long)
    assert pooled(data.x, data.edge_index, batch).shape == (1, 3)  # one graph, 3 classes


# ---------------------------------------------------------------- failures
def test_a_benchmark_whose_every_run_fails_raises_with_the_reason(data_dir):
    @register_model(task_type="node_cls")
    class Broken(TinyGCN):
        def forward(self, data):
            raise RuntimeError("broken on purpose")

    task = Task("club", "node_cls", karate, epochs=2)
    try:
        with pytest.raises(
            BenchmarkFailed, match=r"(?s)0 ok, 0 skipped, 2 failed.*broken on purpose"
        ):
            run_benchmark(
                models={"Broken": Broken}, tasks=[task], seeds=(0, 1), root=data_dir, **FEW
            )
    finally:
        unregister_model("Broken")


def test_a_benchmark_whose_every_run_is_skipped_raises_with_the_reason(data_dir):
    task = Task("club", "node_cls", karate, epochs=2)
    with pytest.raises(BenchmarkFailed, match=r"(?s)0 ok, 1 skipped.*does not support task type"):
        run_benchmark(models={"GIN": GIN}, tasks=[task], seeds=(0,), root=data_dir, **FEW)
