"""Graph regression (graph_reg): L1 loss, MAE and RMSE values, and the canonical split."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn
from torch_geometric.data import Data

from graphnetz.tasks.graph_tasks import GraphRegressionTask


@pytest.fixture
def task(make_task) -> GraphRegressionTask:
    return make_task("graph_reg", nn.Linear(1, 1))


def test_loss_is_the_mean_absolute_error(task):
    out = torch.tensor([[1.0], [2.0], [4.0]])
    y = torch.tensor([[2.0], [2.0], [1.0]])
    # |1 - 2| + |2 - 2| + |4 - 1| = 4 over 3 graphs
    assert float(task.loss(out, y)) == pytest.approx(4 / 3)


def test_score_reports_mae_and_rmse_by_hand(task):
    out = torch.tensor([[1.0], [2.0], [4.0]])
    y = torch.tensor([[2.0], [2.0], [1.0]])
    metrics = task.score(out, y)
    assert metrics["mae"] == pytest.approx(4 / 3)
    assert metrics["rmse"] == pytest.approx(math.sqrt((1 + 0 + 9) / 3))


def test_score_matches_numpy_on_several_targets_per_graph(task):
    rng = np.random.default_rng(0)
    out, y = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    metrics = task.score(torch.tensor(out), torch.tensor(y))
    assert metrics["mae"] == pytest.approx(np.mean(np.abs(out - y)), rel=1e-6)
    assert metrics["rmse"] == pytest.approx(np.sqrt(np.mean((out - y) ** 2)), rel=1e-6)


@pytest.mark.parametrize("shape", [(7, 1), (64, 3), (1000, 1)])
def test_score_is_torchmetrics_bit_for_bit(task, shape):
    """The errors are computed without torchmetrics (its import costs a second) but with
    its operations, so records of either version agree to the last bit."""
    from torchmetrics.functional import mean_absolute_error, mean_squared_error

    gen = torch.Generator().manual_seed(shape[0])
    out, y = torch.randn(shape, generator=gen), torch.randn(shape, generator=gen)
    metrics = task.score(out, y)
    assert metrics["mae"] == float(mean_absolute_error(out, y))
    assert metrics["rmse"] == float(mean_squared_error(out, y, squared=False))


def test_a_perfect_prediction_scores_zero(task):
    y = torch.tensor([[0.5], [1.5]])
    assert task.score(y.clone(), y) == {"mae": 0.0, "rmse": 0.0}


def test_task_minimises_mae():
    assert (GraphRegressionTask.primary_metric, GraphRegressionTask.direction) == ("mae", "min")


# --- the canonical split (a {"train", "val", "test"} dataset, as ZINC ships) ---------------


def graph(value: float) -> Data:
    return Data(
        x=torch.ones(2, 1),
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        y=torch.tensor([value]),
    )


def canonical() -> dict[str, list[Data]]:
    return {
        "train": [graph(float(i)) for i in range(6)],
        "val": [graph(100.0 + i) for i in range(2)],
        "test": [graph(200.0 + i) for i in range(3)],
    }


def split_targets(prepared) -> dict[str, list[float]]:
    names = ("train", "val", "test")
    return {
        name: [float(g.y) for g in next(iter(loader))]
        for name, loader in zip(names, prepared.eval_loaders, strict=True)
    }


@pytest.mark.parametrize("seed", [0, 7])
def test_canonical_split_is_used_as_shipped_whatever_the_seed(seed):
    prepared = GraphRegressionTask.prepare(canonical(), seed=seed)
    assert prepared.info["split"] == "canonical"
    assert (prepared.info["n_train"], prepared.info["n_val"], prepared.info["n_test"]) == (6, 2, 3)
    assert split_targets(prepared) == {
        "train": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        "val": [100.0, 101.0],
        "test": [200.0, 201.0, 202.0],
    }
    assert prepared.out_channels == 1 and prepared.in_channels == 1


def test_canonical_split_without_a_validation_part_names_the_missing_key():
    parts = canonical()
    del parts["val"]
    with pytest.raises(ValueError, match=r"missing \['val'\]"):
        GraphRegressionTask.prepare(parts, seed=0)


def test_a_split_type_other_than_random_needs_a_canonical_split():
    graphs = canonical()["train"] * 5
    with pytest.raises(ValueError, match=r"dataset.split.type='scaffold'.*'random'"):
        GraphRegressionTask.prepare(graphs, seed=0, split={"type": "scaffold"})
