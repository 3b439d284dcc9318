"""``run_benchmark`` end to end: the same pipeline as train.py, user data and models inside it."""

from __future__ import annotations

import json

import pytest
import torch
from hydra.core.config_store import ConfigStore
from torch import nn
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv

from graphnetz import (
    BenchmarkReport,
    iter_benchmark_tasks,
    register_model,
    register_task,
    run_benchmark,
    task_from_dataset,
    unregister_task,
)
from graphnetz.api.benchmark import BenchmarkFailed
from graphnetz.api.models import unregister_model
from graphnetz.training.run import run_experiment

pytestmark = pytest.mark.usefixtures("one_thread")  # small, shared machines


class MyGNN(nn.Module):
    """A user node encoder declaring its task types with a class attribute."""

    task_types = {"node_cls"}

    def __init__(self, in_channels: int, hidden_channels: int = 16, out_channels: int = 2) -> None:
        super().__init__()
        self.conv = GCNConv(in_channels, hidden_channels)
        self.out = nn.Linear(hidden_channels, out_channels)

    def forward(self, x, edge_index):
        return self.out(torch.relu(self.conv(x, edge_index)))


def two_blobs(seed: int, n: int = 30) -> Data:
    """Two feature clusters, edges within each cluster (an easy, homophilous graph)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = torch.randn(n, 4, generator=g) + 2.0 * y[:, None]
    src = torch.randint(0, n, (4 * n,), generator=g)
    dst = (src + 2 * torch.randint(1, n // 2, (4 * n,), generator=g)) % n  # same parity
    return Data(x=x, edge_index=torch.stack([src, dst]), y=y)


@pytest.fixture
def base(data_dir):
    """Overrides every benchmark here uses: shared data dir, few epochs, CPU."""
    return {
        "paths.data_dir": str(data_dir),
        "trainer.max_epochs": 3,
        "trainer.accelerator": "cpu",
        "progress": False,
    }


@pytest.fixture(scope="module")
def karate_benchmark(tmp_path_factory):
    """{"GCN": "gcn", "Mine": MyGNN, "GIN": "gin"} on Karate only, 2 seeds, 3 epochs."""
    out = tmp_path_factory.mktemp("bench")
    karate = [t for t in iter_benchmark_tasks("social") if t.key == "karate/node_cls"]
    report = run_benchmark(
        models={"GCN": "gcn", "Mine": MyGNN, "GIN": "gin"},
        seeds=range(2),
        tasks=karate,
        out_dir=out,
        progress=False,
        **{
            "trainer.max_epochs": 3,
            "trainer.accelerator": "cpu",
            "paths.data_dir": str(tmp_path_factory.mktemp("data")),
        },
    )
    return report, out


def test_report_summary_has_one_row_per_compatible_model(karate_benchmark):
    report, _ = karate_benchmark
    assert isinstance(report, BenchmarkReport)
    summary = report.summary()
    assert list(zip(summary["task"], summary["model"], strict=True)) == [
        ("karate/node_cls", "GCN"),
        ("karate/node_cls", "Mine"),
    ]
    assert list(summary["n"]) == [2, 2] and set(summary["metric"]) == {"accuracy"}


def test_incompatible_model_is_listed_as_skipped(karate_benchmark):
    report, _ = karate_benchmark
    skipped = [(r["model"], r["seed"]) for r in report.skipped]
    assert skipped == [("GIN", 0), ("GIN", 1)]
    assert "does not support task type 'node_cls'" in report.skipped[0]["reason"]


def test_records_are_written_per_task_model_seed(karate_benchmark):
    report, out = karate_benchmark
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("result.json"))
    assert files == [
        f"karate/node_cls/{m}/seed_{s}/result.json" for m in ("GCN", "GIN", "Mine") for s in (0, 1)
    ]
    rebuilt = BenchmarkReport.from_run_dirs([out])  # what analyze.py would build
    assert rebuilt.summary()[["task", "model", "mean"]].equals(
        report.summary()[["task", "model", "mean"]]
    )


def test_a_run_matches_the_same_run_from_train_py(karate_benchmark, make_cfg):
    _, out = karate_benchmark
    api = json.loads((out / "karate/node_cls/GCN/seed_1/result.json").read_text())
    cli = run_experiment(
        make_cfg(
            "dataset=karate",
            "model=gcn",
            "seed=1",
            "trainer.max_epochs=3",
            "trainer.accelerator=cpu",
        )
    )
    assert api["history"] == cli.history and api["metrics"] == cli.metrics


def test_user_objects_never_enter_hydras_config_store(base):
    repo = ConfigStore.instance().repo
    before = {group: sorted(repo[group]) if isinstance(repo[group], dict) else 0 for group in repo}
    task = task_from_dataset("blobs", "node_cls", two_blobs(0), epochs=3, split="random")
    run_benchmark(models={"Mine": MyGNN}, seeds=[0], tasks=[task], **base)
    after = {group: sorted(repo[group]) if isinstance(repo[group], dict) else 0 for group in repo}
    assert after == before


def test_seed_aware_loader_receives_each_seed(base):
    seeds_seen = []

    def resampled(seed):
        seeds_seen.append(seed)
        return two_blobs(seed)

    task = task_from_dataset("blobs", "node_cls", resampled, epochs=3, split="random")
    report = run_benchmark(models={"A": "mlp", "B": MyGNN}, seeds=[3, 7], tasks=[task], **base)
    assert sorted(seeds_seen) == [3, 7]  # once per seed, shared by both models
    assert list(report.summary()["n"]) == [2, 2]


def test_loader_without_seed_is_called_once_across_seeds(base):
    calls = []

    def fixed():
        calls.append(1)
        return two_blobs(0)

    task = task_from_dataset("fixed", "node_cls", fixed, epochs=3, split="random")
    run_benchmark(models=["mlp"], seeds=range(3), tasks=[task], **base)
    assert len(calls) == 1


def test_registered_task_is_run_by_category_with_decorated_and_inline_models(base):
    @register_model(task_type={"node_cls", "link_pred"})
    class Decorated(MyGNN):
        pass

    register_task("toys", task_from_dataset("blobs", "node_cls", two_blobs(0), split="random"))
    inline = (MyGNN, "node_cls", lambda i, h, o: MyGNN(i, 8, o))
    try:
        report = run_benchmark("toys", {"Dec": Decorated, "Inline": inline}, seeds=range(2), **base)
    finally:
        unregister_task("toys", "blobs")
        unregister_model("Decorated")
    summary = report.summary()
    assert list(zip(summary["task"], summary["model"], strict=True)) == [
        ("blobs/node_cls", "Dec"),
        ("blobs/node_cls", "Inline"),
    ]


def test_model_overrides_reach_user_models(base, tmp_path):
    class Recorded(MyGNN):
        widths: list[int] = []

        def __init__(self, in_channels, hidden_channels=16, out_channels=2):
            super().__init__(in_channels, hidden_channels, out_channels)
            Recorded.widths.append(self.conv.out_channels)

    task = task_from_dataset("blobs", "node_cls", two_blobs(0), split="random")
    run_benchmark(
        models={"Mine": Recorded},
        seeds=[0],
        tasks=[task],
        out_dir=tmp_path,
        **{**base, "model.hidden_channels": 5},
    )
    assert Recorded.widths == [5]  # the model that trained was built 5 wide
    record = json.loads((tmp_path / "blobs/node_cls/Mine/seed_0/result.json").read_text())
    assert record["status"] == "ok", record["error"]
    assert record["config"]["model"]["hidden_channels"] == 5
    assert record["config"]["model"]["defined_in"].endswith("Recorded")


def test_missing_attribute_of_a_lazily_loaded_dataset_fails_the_run_with_its_name(base):
    def no_masks():
        return two_blobs(0)  # no train/val/test masks and no random split asked for

    task = task_from_dataset("nomask", "node_cls", no_masks, epochs=3)
    with pytest.raises(BenchmarkFailed) as failed:  # its only run failed
        run_benchmark(models=["mlp"], seeds=[0], tasks=[task], **base)
    assert "1 runs: 0 ok, 0 skipped, 1 failed" in str(failed.value)
    assert "misses attribute(s) ['train_mask', 'val_mask', 'test_mask']" in str(failed.value)


def test_a_torch_geometric_dataset_object_is_a_user_dataset(base):
    from torch_geometric.datasets import KarateClub

    task = task_from_dataset("club", "link_pred", KarateClub(), epochs=3)
    report = run_benchmark(models=["gcn"], seeds=[0], tasks=[task], **base)
    assert report.failed == [] and list(report.summary()["metric"]) == ["auc"]


def test_unknown_task_names_list_the_valid_ones(base):
    with pytest.raises(ValueError, match=r"no benchmark task 'karat'.*'karate/node_cls'"):
        run_benchmark(models=["gcn"], seeds=[0], tasks=["karat"], **base)
