"""Multi-label graph classification (ml_graph_cls): NaN targets, metrics, configs, errors."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score
from torch import nn
from torch_geometric.data import Batch, Data

from graphnetz import run_benchmark, task_from_dataset
from graphnetz.data import pyg
from graphnetz.data.ogb import OgbMissingError, load_ogb, task_graph
from graphnetz.data.registry import LOADER_REGISTRY, catalogue, offline_availability
from graphnetz.tasks.graph_tasks import MultiLabelGraphClassificationTask
from graphnetz.tasks.multilabel_metrics import multilabel_metrics
from graphnetz.training.run import run_experiment

pytestmark = pytest.mark.usefixtures("one_thread")

KINDS = ("cycle", "path", "star")


def shape_graph(kind: str, size: int) -> tuple[torch.Tensor, int]:
    """Undirected edges (both directions) of a cycle / path on ``size`` nodes or a star
    with ``size`` leaves, and the node count."""
    if kind == "star":
        pairs = [(0, i) for i in range(1, size + 1)]
    else:
        pairs = [(i, i + 1) for i in range(size - 1)] + ([(size - 1, 0)] if kind == "cycle" else [])
    edges = torch.tensor(pairs).t()
    return torch.cat([edges, edges.flip(0)], dim=1), size + (kind == "star")


def shapes(num_graphs: int = 90, seed: int = 0, missing: float = 0.2) -> list[Data]:
    """Cycles, paths and stars (5-10 nodes / leaves), x = [1, degree / 4], four labels read
    off the structure (is a cycle, is a star, has >= 8 nodes, is not a path), each missing
    (NaN) with probability ``missing``."""
    g = torch.Generator().manual_seed(seed)
    graphs = []
    for i in range(num_graphs):
        kind = KINDS[i % 3]
        edge_index, n = shape_graph(kind, int(torch.randint(5, 11, (1,), generator=g)))
        deg = torch.bincount(edge_index[0], minlength=n).float()
        y = torch.tensor([[kind == "cycle", kind == "star", n >= 8, kind != "path"]]).float()
        y[torch.rand(y.shape, generator=g) < missing] = math.nan
        graphs.append(Data(x=torch.stack([torch.ones(n), deg / 4], 1), edge_index=edge_index, y=y))
    return graphs


HALF_SPLIT = {"type": "random", "train": 0.5, "val": 0.25}


# ------------------------------------------------------------- sklearn, computed apart
def sklearn_scores(logits: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """The four headline metrics with scikit-learn, NaN targets dropped per label, macro
    averages over the labels with both classes among their labelled rows."""
    probs = 1.0 / (1.0 + np.exp(-logits))
    pred = (probs >= 0.5).astype(int)
    ap, auroc, f1 = [], [], []
    for c in range(target.shape[1]):
        rows = ~np.isnan(target[:, c])
        y = target[rows, c].astype(int)
        if 0 < y.sum() < len(y):
            ap.append(average_precision_score(y, probs[rows, c]))
            auroc.append(roc_auc_score(y, probs[rows, c]))
            f1.append(f1_score(y, pred[rows, c], zero_division=0))
    labelled = ~np.isnan(target)
    micro = f1_score(target[labelled].astype(int), pred[labelled], zero_division=0)
    return {
        "macro_ap": float(np.mean(ap)),
        "macro_auroc": float(np.mean(auroc)),
        "macro_f1": float(np.mean(f1)),
        "micro_f1": float(micro),
    }


def test_nan_aware_metrics_match_sklearn_with_the_both_classes_rule():
    rng = np.random.default_rng(0)
    target = (rng.random((40, 5)) < 0.4).astype(float)
    target[:, 3] = 1.0  # every labelled graph positive: excluded (no negative)
    target[:, 4] = 0.0  # no positive: excluded
    target[0, 0], target[1, 0] = 1.0, 0.0
    target[rng.random(target.shape) < 0.25] = np.nan
    logits = rng.normal(size=target.shape) + 2.0 * (np.nan_to_num(target) - 0.5)
    out = multilabel_metrics(torch.tensor(logits), torch.tensor(target), require_both_classes=True)
    expected = sklearn_scores(logits, target)
    for key, value in expected.items():
        assert out[key] == pytest.approx(value, abs=1e-6), key
    assert (out["n_labels_evaluated"], out["n_labels_excluded"]) == (3, 2)


def test_a_label_without_measurements_is_excluded_and_missing_entries_change_nothing():
    rng = np.random.default_rng(1)
    target = (rng.random((30, 3)) < 0.5).astype(float)
    target[0, :2], target[1, :2] = 1.0, 0.0
    target[:, 2] = np.nan  # never measured
    logits = torch.tensor(rng.normal(size=target.shape))
    out = multilabel_metrics(logits, torch.tensor(target), require_both_classes=True)
    assert (out["n_labels_evaluated"], out["n_labels_excluded"]) == (2, 1)
    # whatever the model scores where the target is missing leaves every metric unchanged
    other = logits.clone()
    other[:, 2] = 100.0
    assert multilabel_metrics(other, torch.tensor(target), require_both_classes=True) == out


# ------------------------------------------------------------------------- the loss
def test_nan_targets_add_nothing_to_the_loss_or_its_gradient(make_task):
    task = make_task("ml_graph_cls", nn.Linear(2, 3))
    graphs = [
        Data(x=torch.ones(2, 2), edge_index=torch.tensor([[0, 1], [1, 0]]), y=y)
        for y in (torch.tensor([[1.0, math.nan, 0.0]]), torch.tensor([[math.nan, 0.0, 1.0]]))
    ]
    y = task.targets(Batch.from_data_list(graphs))
    assert y.shape == (2, 3) and int(y.isnan().sum()) == 2
    z = torch.tensor([[0.3, -2.0, 1.2], [5.0, -0.7, 0.4]], requires_grad=True)
    loss = task.loss(z, y)
    s = torch.sigmoid(z.detach())
    by_hand = (
        -(torch.log(s[0, 0]) + torch.log(1 - s[0, 2]) + torch.log(1 - s[1, 1]) + torch.log(s[1, 2]))
        / 4
    )  # the mean over the four measured labels
    assert float(loss.detach()) == pytest.approx(float(by_hand), rel=1e-6)
    loss.backward()
    measured = ~y.isnan()
    assert torch.all(z.grad[~measured] == 0)
    expected = (s - torch.nan_to_num(y)) / 4
    assert torch.allclose(z.grad[measured], expected[measured])


def test_a_batch_without_any_measured_label_has_zero_loss_not_nan(make_task):
    task = make_task("ml_graph_cls", nn.Linear(2, 3))
    z = torch.randn(2, 3, requires_grad=True)
    loss = task.loss(z, torch.full((2, 3), math.nan))
    loss.backward()
    assert float(loss.detach()) == 0.0 and torch.all(z.grad == 0)


# --------------------------------------------------------------- through the pipeline
def test_the_recorded_metrics_are_sklearns_on_the_runs_own_predictions(
    make_cfg, tmp_path, monkeypatch
):
    """The scores of every evaluation, spied on inside a real run, against sklearn."""
    seen = []
    score = MultiLabelGraphClassificationTask.score

    def spy(self, logits, y):
        seen.append((logits.numpy().copy(), y.numpy().copy()))
        return score(self, logits, y)

    monkeypatch.setattr(MultiLabelGraphClassificationTask, "score", spy)
    graphs = shapes()
    cfg = make_cfg(
        "dataset=peptides_func", "model=gcn", "trainer.max_epochs=4", "trainer.accelerator=cpu"
    )
    record = run_experiment(cfg, tmp_path, load_data=lambda: graphs)
    assert record.status == "ok", record.reason
    assert len(seen) == 3 * 4  # train, val, test per epoch
    logits, target = seen[3 * record.selected_epoch + 2]  # the selected epoch's test split
    assert target.shape == (record.data["n_test"], 4) and np.isnan(target).any()
    for key, value in sklearn_scores(logits, target).items():
        assert record.metrics["test"][key] == pytest.approx(value, abs=1e-6), key


def test_structural_labels_are_learned_and_selected_by_best_validation_ap(tmp_path):
    task = task_from_dataset("shapes", "ml_graph_cls", shapes(), epochs=30, split=HALF_SPLIT)
    run_benchmark(
        models=["gin", "gcn"],
        tasks=[task],
        seeds=[0, 1],
        out_dir=tmp_path,
        progress=False,
        **{"paths.data_dir": str(tmp_path / "data"), "trainer.accelerator": "cpu"},
    )
    margins = {}
    for model in ("gin", "gcn"):
        for seed in (0, 1):
            path = tmp_path / f"shapes/ml_graph_cls/{model}/seed_{seed}/result.json"
            record = json.loads(path.read_text())
            assert record["status"] == "ok", record["reason"]
            assert (record["primary_metric"], record["direction"]) == ("macro_ap", "max")
            assert record["selection"] == "best_val"
            history = record["history"]
            val = [row["val_macro_ap"] for row in history]
            assert record["selected_epoch"] == val.index(max(val))  # the earliest best
            row = history[record["selected_epoch"]]
            assert record["metrics"]["test"]["macro_ap"] == row["test_macro_ap"]
            assert {"micro_f1", "macro_f1", "macro_auroc"} <= set(record["metrics"]["test"])
            chance = record["dataset_facts"]["chance"]
            assert (chance["metric"], chance["rule"]) == ("macro_ap", "constant score")
            margins[model, seed] = record["metrics"]["test"]["macro_ap"] - chance["value"]
    # measured: constant score 0.44 / 0.48 on the two test splits; GIN (sum pooling) reaches
    # 0.99 / 1.00, GCN through the mean-pooling adapter 0.81 / 0.70
    assert min(margins["gin", s] for s in (0, 1)) >= 0.3
    assert min(margins["gcn", s] for s in (0, 1)) >= 0.1


def test_the_same_seed_gives_the_same_history(make_cfg, tmp_path):
    graphs = shapes(45)
    cfg = make_cfg(
        "dataset=peptides_func", "model=sage", "trainer.max_epochs=3", "trainer.accelerator=cpu"
    )
    first = run_experiment(cfg, tmp_path / "a", load_data=lambda: graphs)
    again = run_experiment(cfg, tmp_path / "b", load_data=lambda: graphs)
    assert first.status == again.status == "ok"
    assert first.history == again.history and first.metrics == again.metrics


# ------------------------------------------------------------------ configs, catalogue
def test_both_configs_compose_with_their_natural_task_and_are_in_the_registry(make_cfg):
    for config, loader_name in (
        ("peptides_func", "Peptides-func"),
        ("ogbg_molpcba", "ogbg-molpcba"),
    ):
        cfg = make_cfg(f"dataset={config}")
        assert cfg.task.type == "ml_graph_cls" and cfg.task.selection == "best_val"
        assert (cfg.dataset.category, list(cfg.dataset.task_types)) == ("biology", ["ml_graph_cls"])
        assert cfg.dataset.loader.name == loader_name
    assert LOADER_REGISTRY["biology"]["ml_graph_cls"] == ["ogbg_molpcba", "peptides_func"]
    relative_dir, files = pyg.raw_location("torch_geometric.datasets.LRGBDataset", "Peptides-func")
    assert relative_dir == "LRGBDataset/peptides-func/raw"
    assert files == ("train.pt", "val.pt", "test.pt")


def test_both_are_unavailable_offline_without_their_files(tmp_path):
    entries = {e.config: e for e in catalogue()}
    empty = tmp_path / "mirror"
    empty.mkdir()
    assert str(offline_availability(entries["peptides_func"], tmp_path, empty)) == "no (download)"
    molpcba = offline_availability(entries["ogbg_molpcba"], tmp_path, empty)
    assert molpcba.offline is False
    if importlib.util.find_spec("ogb") is None:
        assert "pip install graphnetz[ogb]" in molpcba.how
        with pytest.raises(OgbMissingError, match=r"'ogbg-molpcba'.*pip install graphnetz\[ogb\]"):
            load_ogb(tmp_path, None, name="ogbg-molpcba")


def test_ogb_molecules_keep_multi_label_targets_with_their_nans():
    edges = torch.tensor([[0, 1], [1, 0]])
    pcba = task_graph(
        Data(
            x=torch.ones(2, 9, dtype=torch.long),
            edge_index=edges,
            y=torch.tensor([[1.0, math.nan, 0.0]]),
        )
    )
    assert pcba.y.dtype == torch.float and pcba.y.shape == (1, 3)
    assert pcba.y.isnan().tolist() == [[False, True, False]] and pcba.x.dtype == torch.float
    hiv = task_graph(Data(x=torch.ones(2, 9), edge_index=edges, y=torch.tensor([[1]])))
    assert hiv.y.dtype == torch.long and hiv.y.tolist() == [1]  # single label: graph_cls


# ------------------------------------------------------------------------ clear errors
def test_a_dataset_that_does_not_serve_the_task_type_is_a_failed_record(make_cfg, tmp_path):
    record = run_experiment(make_cfg("dataset=peptides_func", "task=graph_cls"), tmp_path / "a")
    assert record.status == "failed"
    assert "does not serve task type 'graph_cls'; it serves ['ml_graph_cls']" in record.reason
    record = run_experiment(make_cfg("dataset=mutag", "task=ml_graph_cls"), tmp_path / "b")
    assert record.status == "failed"
    assert "does not serve task type 'ml_graph_cls'; it serves ['graph_cls']" in record.reason


def test_a_node_only_model_is_skipped_before_any_data_is_loaded(make_cfg, tmp_path):
    record = run_experiment(make_cfg("dataset=peptides_func", "model=deepwalk"), tmp_path)
    assert record.status == "skipped"
    assert "does not support task type 'ml_graph_cls'" in record.reason


def test_single_label_graphs_are_refused_naming_the_shape_needed():
    graphs = [
        Data(x=torch.ones(2, 1), edge_index=torch.tensor([[0], [1]]), y=torch.tensor([i % 2]))
        for i in range(20)
    ]
    with pytest.raises(ValueError, match=r"needs y of shape \[1, C\].*got shapes \[\(1,\)\]"):
        MultiLabelGraphClassificationTask.prepare(graphs, seed=0)
