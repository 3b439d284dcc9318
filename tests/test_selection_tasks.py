"""Model selection: best_val on a hand-made history, refusal, early stopping in a real run."""

from __future__ import annotations

from functools import partial

import pytest
import torch

from graphnetz.models.encoders import GCN
from graphnetz.tasks.node_tasks import NodeClassificationTask
from graphnetz.tasks.selection import select_epoch
from graphnetz.training.run import run_experiment

HISTORY = [
    {"val_accuracy": 0.50, "val_mae": 3.0},
    {"val_accuracy": 0.80, "val_mae": 1.0},
    {"val_accuracy": 0.80, "val_mae": 2.0},
    {"val_accuracy": float("nan"), "val_mae": 0.5},
    {"val_accuracy": 0.70, "val_mae": 4.0},
]


def test_best_val_picks_the_earliest_best_epoch_and_ignores_nan():
    assert select_epoch(HISTORY, "val_accuracy", "max", "best_val") == 1  # tie 1/2 -> earliest
    assert select_epoch(HISTORY, "val_mae", "min", "best_val") == 3
    assert select_epoch(HISTORY, "val_accuracy", "max", "final") == 4


ADAM = {"optimizer": partial(torch.optim.Adam, lr=0.01), "lr": 0.01, "weight_decay": 0.0}


def test_best_val_is_refused_when_the_reported_split_is_validation():
    class ValidationOnlyTask(NodeClassificationTask):
        report_split = "val"

    with pytest.raises(ValueError, match="best_val is refused.*validation series"):
        ValidationOnlyTask(GCN(4, 8, 2), selection="best_val", **ADAM)
    ValidationOnlyTask(GCN(4, 8, 2), selection="final", **ADAM)  # the fixed-epoch protocol is fine


def test_early_stopping_stops_and_the_record_states_the_selection(make_cfg, tmp_path, one_thread):
    cfg = make_cfg(
        "dataset=karate",
        "model=gcn",
        "task=node_cls",
        "task.selection=best_val",
        "task.patience=3",
        "trainer.max_epochs=300",
        "task.lr=0.05",
    )
    record = run_experiment(cfg, tmp_path)
    assert record.status == "ok", record.reason
    assert record.epochs_run < 300
    assert record.selection == "best_val"
    history = record.history
    best = select_epoch(history, "val_accuracy", "max", "best_val")
    assert record.selected_epoch == history[best]["epoch"]
    assert record.epochs_run - 1 - best == 3  # stopped exactly `patience` epochs after the best
    assert record.metrics["test"]["accuracy"] == history[best]["test_accuracy"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["dataset.split.val=0.0", "dataset.split.train=0.7"],
            "the val split of the random (seed 0) node split has no node",
        ),
        (
            ["task=link_pred", "+dataset.split.link={val:0.0,test:0.1}"],
            "the val split of the link split has no edge",
        ),
    ],
)
def test_an_empty_validation_split_fails_by_name_not_as_a_divergence(make_cfg, overrides, message):
    record = run_experiment(make_cfg("dataset=karate", "trainer.max_epochs=2", *overrides))
    assert record.status == "failed" and message in record.reason
