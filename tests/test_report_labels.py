"""Model labels of runs that differ in a setting: a variant added on one task is the labelled
entry, the model's default run keeps its name on every task and stays in the ranking."""

from __future__ import annotations

import warnings

import pytest
from report_fixtures import schema2_record

from graphnetz.report import BenchmarkReport

DEFAULT_LR = {"node_cls": 0.01, "graph_cls": 0.001}  # conf/task/*.yaml


def record(dataset: str, kind: str, model: str, seed: int, lr: float | None = None) -> dict:
    """A schema-2 record of ``model`` on ``dataset``; ``lr`` None is the task's default."""
    lr = DEFAULT_LR[kind] if lr is None else lr
    accuracy = 0.5 + 0.1 * (model == "gcn") + 0.01 * seed + lr
    config = {
        "seed": seed,
        "dataset": {"name": dataset},
        "model": {"name": model},
        "task": {"name": kind, "lr": lr, "optimizer": {"lr": lr}},
    }
    return schema2_record(f"{dataset}/{kind}", model, seed, config, accuracy)


def sweep(variant_seeds: range = range(2)) -> list[dict]:
    """karate, mutag and cora with gcn and mlp at their defaults, then one extra gcn
    ``task.lr=0.05`` on cora."""
    tasks = [("karate", "node_cls"), ("mutag", "graph_cls"), ("cora", "node_cls")]
    runs = [record(d, kind, m, s) for d, kind in tasks for m in ("gcn", "mlp") for s in range(3)]
    return runs + [record("cora", "node_cls", "gcn", s, lr=0.05) for s in variant_seeds]


def test_a_variant_on_one_task_is_labelled_and_the_default_keeps_its_name():
    summary = BenchmarkReport.from_records(sweep()).summary()
    cora = summary[summary["task"] == "cora/node_cls"]
    assert sorted(cora["model"]) == ["gcn", "gcn[task.lr=0.05]", "mlp"]
    assert set(summary["model"]) == {"gcn", "mlp", "gcn[task.lr=0.05]"}


def test_the_default_run_stays_in_the_ranking_across_tasks():
    report = BenchmarkReport.from_records(sweep())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ranks = report.friedman()
    assert ranks.applicable
    assert sorted(ranks.mean_ranks.index) == ["gcn", "mlp"]
    assert ranks.dropped_models == ["gcn[task.lr=0.05]"]
    assert any("gcn[task.lr=0.05]" in str(w.message) for w in caught)


def test_the_label_does_not_depend_on_the_order_the_runs_are_read_in():
    runs = sweep(variant_seeds=range(3))  # as many seeds as the default: seeds do not decide
    forward = BenchmarkReport.from_records(runs).summary()
    backward = BenchmarkReport.from_records(runs[::-1]).summary()
    key = ["task", "model", "mean"]
    assert forward.sort_values(key)[key].values.tolist() == (
        backward.sort_values(key)[key].values.tolist()
    )
    assert "gcn[task.lr=0.05]" in set(forward["model"])


def test_a_sweep_over_a_setting_on_every_task_labels_every_configuration():
    runs = [
        record(d, "node_cls", "gcn", s, lr=lr)
        for d in ("karate", "cora")
        for lr in (0.01, 0.05)
        for s in range(2)
    ]
    models = set(BenchmarkReport.from_records(runs).summary()["model"])
    assert models == {"gcn[task.lr=0.01]", "gcn[task.lr=0.05]"}


def test_where_other_tasks_disagree_every_configuration_is_labelled():
    # mutag ran gcn with its own default (lr 0.001): it names neither cora configuration
    runs = [record("mutag", "graph_cls", "gcn", s) for s in range(2)]
    runs += [record("cora", "node_cls", "gcn", s, lr=lr) for lr in (0.01, 0.05) for s in range(2)]
    summary = BenchmarkReport.from_records(runs).summary()
    cora = summary[summary["task"] == "cora/node_cls"]
    assert cora["model"].tolist() == ["gcn[task.lr=0.01]", "gcn[task.lr=0.05]"]


def test_only_tasks_of_the_same_type_name_the_default():
    # mutag and proteins ran gcn at the graph default lr 0.001; cora's variant at that value
    # is still the variant, as karate, the other node task, ran gcn at the node default 0.01
    tasks = [("karate", "node_cls"), ("mutag", "graph_cls"), ("proteins", "graph_cls")]
    runs = [
        record(d, kind, "gcn", s) for d, kind in tasks + [("cora", "node_cls")] for s in range(2)
    ]
    runs += [record("cora", "node_cls", "gcn", s, lr=0.001) for s in range(2)]
    summary = BenchmarkReport.from_records(runs).summary()
    cora = summary[summary["task"] == "cora/node_cls"].set_index("model")
    assert cora.index.tolist() == ["gcn", "gcn[task.lr=0.001]"]
    assert cora.loc["gcn", "mean"] == pytest.approx(0.6 + 0.005 + 0.01)  # seeds 0, 1; lr 0.01


def test_without_a_task_of_the_same_type_every_configuration_is_labelled():
    # only graph tasks ran gcn besides cora: they do not say which cora run is the default
    runs = [record(d, "graph_cls", "gcn", s) for d in ("mutag", "proteins") for s in range(2)]
    runs += [record("cora", "node_cls", "gcn", s, lr=lr) for lr in (0.01, 0.001) for s in range(2)]
    summary = BenchmarkReport.from_records(runs).summary()
    cora = summary[summary["task"] == "cora/node_cls"]
    assert sorted(cora["model"]) == ["gcn[task.lr=0.001]", "gcn[task.lr=0.01]"]
