"""The run protocol end to end on real configs: training, records, determinism, failures."""

from __future__ import annotations

import json

import pytest
import torch
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf

from graphnetz.training.run import run_experiment


def test_gcn_on_karate_writes_a_complete_ok_record(make_cfg, tmp_path):
    cfg = make_cfg("dataset=karate", "model=gcn", "trainer.max_epochs=5", "seed=0")
    record = run_experiment(cfg, tmp_path / "run")
    on_disk = json.loads((tmp_path / "run" / "result.json").read_text())
    assert on_disk["status"] == "ok", on_disk["error"]
    assert on_disk["task"] == "karate/node_cls" and on_disk["category"] == "social"
    assert on_disk["primary_metric"] == "accuracy" and on_disk["direction"] == "max"
    assert set(on_disk["metrics"]) == {"train", "val", "test"}
    assert len(on_disk["history"]) == 5 and on_disk["selected_epoch"] == 4
    assert {"train_loss", "val_accuracy", "test_accuracy"} <= set(on_disk["history"][0])
    assert on_disk["config"]["model"]["hidden_channels"] == 64
    assert (
        on_disk["versions"]["torch"]
        and on_disk["versions"]["graphnetz_revision"]
        and on_disk["versions"]["cpu_kernels"] == str(torch.backends.cpu.get_cpu_capability())
        and on_disk["wall_time_s"] > 0
    )
    assert record.metrics == on_disk["metrics"]
    assert not list((tmp_path / "run").glob("*.tmp"))  # nothing half-written left behind


def test_seed_zero_is_a_real_seed(make_cfg):
    zero = run_experiment(make_cfg("seed=0", "trainer.max_epochs=3"))
    one = run_experiment(make_cfg("seed=1", "trainer.max_epochs=3"))
    assert zero.seed == 0 and zero.data["split"] == "random (seed 0)"
    assert zero.history != one.history


@pytest.mark.parametrize("model", ["gcn", "gat", "sage", "gt", "mlp"])
def test_same_seed_gives_identical_metrics(make_cfg, model):
    cfg = make_cfg(f"model={model}", "seed=3", "trainer.max_epochs=4")
    first, second = run_experiment(cfg), run_experiment(cfg)
    assert first.status == "ok", first.error
    assert first.history == second.history
    assert first.metrics == second.metrics


def test_different_seeds_give_different_metrics(make_cfg):
    runs = [run_experiment(make_cfg(f"seed={s}", "trainer.max_epochs=4")) for s in (0, 1)]
    assert runs[0].history[-1]["train_loss"] != runs[1].history[-1]["train_loss"]


def test_hyperparameter_overrides_reach_the_model_and_optimiser(make_cfg):
    from graphnetz.training.pipeline import build_run
    from graphnetz.training.resolve import resolve_run

    cfg = make_cfg("model.hidden_channels=8", "task.lr=0.005", "task.weight_decay=0.01")
    built = build_run(resolve_run(cfg))
    assert [layer.out_channels for layer in built.model.layers] == [8, 4]  # karate: 4 classes
    group = built.module.configure_optimizers().param_groups[0]
    assert (group["lr"], group["weight_decay"]) == (0.005, 0.01)
    assert run_experiment(cfg.copy()).config["task"]["lr"] == 0.005  # and the record says so


def test_invalid_model_value_is_recorded_as_failed(make_cfg, tmp_path):
    record = run_experiment(make_cfg("model.num_layers=0", "trainer.max_epochs=2"), tmp_path)
    assert record.status == "failed"
    assert "num_layers" in record.reason
    assert json.loads((tmp_path / "result.json").read_text())["status"] == "failed"


def test_invalid_selection_names_the_choices(make_cfg):
    record = run_experiment(make_cfg("task.selection=best", "trainer.max_epochs=2"))
    assert record.status == "failed"
    assert "best" in record.reason and "best_val" in record.reason


def test_cora_gcn_reaches_published_accuracy(make_cfg, mirror, one_thread):
    accs = []
    for seed in range(3):
        record = run_experiment(
            make_cfg("dataset=cora", "model=gcn", f"seed={seed}", mirror=mirror)
        )
        assert record.status == "ok", record.error
        assert record.epochs_run == 100  # the dataset's node_cls default
        assert record.data["n_train"] == 140 and record.data["n_test"] == 1000
        accs.append(record.metrics["test"]["accuracy"])
    # Kipf & Welling (2017) report 0.815; seeds 0-2 measured 0.805, 0.810, 0.815 (mean 0.810).
    # 0.795 is 2 points under the published value: a 2-point regression fails.
    assert sum(accs) / 3 >= 0.795


def test_mirror_is_never_written(make_cfg, mirror, tmp_path):
    def snapshot():
        return {str(p): p.stat().st_mtime_ns for p in sorted((mirror / "Planetoid").rglob("*"))}

    before = snapshot()
    cfg = make_cfg("dataset=citeseer", "trainer.max_epochs=1", mirror=mirror)
    cfg.paths.data_dir = str(tmp_path / "fresh_data")  # force staging + processing
    record = run_experiment(cfg)
    assert record.status == "ok", record.error
    assert snapshot() == before
    assert (tmp_path / "fresh_data" / "Planetoid" / "CiteSeer" / "processed").is_dir()


def test_missing_dataset_error_names_dataset_and_paths(tmp_path):
    from graphnetz.data.mirror import DatasetUnavailableError
    from graphnetz.data.pyg import load_planetoid

    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    with pytest.raises(DatasetUnavailableError) as info:
        load_planetoid(tmp_path / "data", empty, name="PubMed")
    message = str(info.value)
    assert "PubMed" in message and str(empty) in message and "data_mirror" in message


@pytest.mark.parametrize(
    "dataset, task_type, expected", [("karate", "node_cls", 0.5), ("triangles", "graph_reg", 0.0)]
)
def test_default_dropout_is_the_task_types_and_is_recorded(make_cfg, dataset, task_type, expected):
    cfg = make_cfg(f"dataset={dataset}", "model=gcn", "trainer.max_epochs=1")
    assert OmegaConf.to_container(cfg.model)["dropout"] == "${task.encoder_dropout}"
    record = run_experiment(cfg)
    assert record.status == "ok", record.error
    assert record.task_type == task_type
    assert record.config["model"]["dropout"] == expected
    assert OmegaConf.to_container(cfg.model)["dropout"] == "${task.encoder_dropout}"  # untouched


def test_task_specific_keys_work_with_the_automatic_task(make_cfg):
    record = run_experiment(
        make_cfg("dataset=triangles", "task.batch_size=8", "trainer.max_epochs=1")
    )
    assert record.status == "ok", record.error
    assert record.task_type == "graph_reg"


def test_a_key_the_task_lacks_is_refused_by_name(make_cfg):
    with pytest.raises(ConfigCompositionException, match="task.rank_sample"):
        make_cfg("dataset=karate", "task.rank_sample=10")
    # forced in (as a sweep over several task types would), it is a failed run naming it
    record = run_experiment(
        make_cfg("dataset=karate", "++task.rank_sample=10", "trainer.max_epochs=1")
    )
    assert record.status == "failed"
    assert "task.rank_sample does not apply to task type 'node_cls'" in record.reason
    assert "'dgi_pretrain_epochs'" in record.reason  # the settings it has


def test_long_runs_log_their_progress(make_cfg, monkeypatch, caplog):
    import logging

    import graphnetz.tasks.base as base

    monkeypatch.setattr(base, "PROGRESS_EVERY_S", 0.0)  # every epoch counts as "long"
    with caplog.at_level(logging.INFO, logger="graphnetz"):
        run_experiment(make_cfg("trainer.max_epochs=3"))
    lines = [r.getMessage() for r in caplog.records if "epoch" in r.getMessage()]
    assert any("epoch 3/3" in line and "val_accuracy=" in line for line in lines)
    # parallel sweep jobs share one log: each progress line names its run
    assert all("karate/node_cls gcn seed=0 epoch" in line for line in lines if "/3" in line)
