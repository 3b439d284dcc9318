"""A run's config is resolved once: every default filled in, stored, and what was built."""

from __future__ import annotations

import json
import os

import pytest
import torch
from hydra.errors import InstantiationException

from graphnetz import launch
from graphnetz.data.mirror import MIRROR_ENV, resolve_mirror
from graphnetz.models.adapters import PooledEncoder
from graphnetz.training.pipeline import build_run
from graphnetz.training.resolve import resolve_run
from graphnetz.training.run import run_experiment


def test_each_dataset_chooses_its_natural_task_and_the_command_line_wins(make_cfg):
    assert make_cfg("dataset=mutag").task.type == "graph_cls"
    assert make_cfg("dataset=humloc").task.type == "ml_node_cls"
    assert make_cfg("dataset=cora", "task=link_pred").task.type == "link_pred"
    assert make_cfg("experiment=ml_real", "dataset=pcg").task.type == "ml_node_cls"


def test_the_record_stores_the_resolved_config_of_a_node_task(make_cfg, tmp_path):
    record = run_experiment(make_cfg("dataset=karate", "model=gcn"), tmp_path / "run")
    config = record.config
    assert record.status == "ok"
    assert (config["task"]["lr"], config["task"]["weight_decay"]) == (0.01, 5e-4)
    assert config["task"]["optimizer"] == {
        "_target_": "torch.optim.Adam",
        "_partial_": True,
        "lr": 0.01,
        "weight_decay": 5e-4,
    }
    assert config["model"]["dropout"] == 0.5  # the node tasks' encoder dropout
    assert config["trainer"]["max_epochs"] == 100  # dataset.epochs.node_cls
    assert os.path.isabs(config["paths"]["data_dir"])
    assert "${" not in (tmp_path / "run" / "result.json").read_text()


def test_the_record_stores_the_resolved_config_of_a_graph_task(make_cfg, mirror, tmp_path):
    cfg = make_cfg("dataset=mutag", "model=sage", "trainer.max_epochs=1", mirror=mirror)
    record = run_experiment(cfg, tmp_path / "run")
    stored = json.loads((tmp_path / "run" / "result.json").read_text())["config"]
    assert record.status == "ok" and stored == record.config
    task = stored["task"]
    assert (task["lr"], task["weight_decay"], task["batch_size"]) == (1e-3, 0.0, 32)
    assert stored["model"]["dropout"] == 0.0  # graph-level tasks' encoder dropout
    assert stored["paths"]["data_mirror"] == str(mirror)


def test_the_optimiser_is_the_configured_one_with_the_task_lr_and_weight_decay(make_cfg):
    overrides = (
        "task.optimizer._target_=torch.optim.AdamW",
        "task.lr=0.02",
        "task.weight_decay=1e-3",
    )
    optimiser = build_run(resolve_run(make_cfg(*overrides))).module.configure_optimizers()
    assert type(optimiser) is torch.optim.AdamW
    assert optimiser.param_groups[0]["lr"] == 0.02
    assert optimiser.param_groups[0]["weight_decay"] == 1e-3
    default = build_run(resolve_run(make_cfg())).module.configure_optimizers()
    assert type(default) is torch.optim.Adam and default.param_groups[0]["lr"] == 0.01


def test_a_dropout_override_reaches_the_built_model(make_cfg):
    built = build_run(resolve_run(make_cfg("model.dropout=0.3")))
    assert built.model.dropout == 0.3
    assert build_run(resolve_run(make_cfg())).model.dropout == 0.5


def test_graph_tasks_build_their_default_encoder_dropout(make_cfg, mirror):
    built = build_run(resolve_run(make_cfg("dataset=mutag", "model=gcn", mirror=mirror)))
    assert isinstance(built.model, PooledEncoder) and built.model.encoder.dropout == 0.0
    assert built.module.batch_size == 32


def test_a_config_that_cannot_run_is_a_failed_record_naming_the_valid_choices(make_cfg, tmp_path):
    record = run_experiment(make_cfg("dataset=karate", "task=graph_cls"), tmp_path / "run")
    assert record.status == "failed"
    assert "does not serve task type 'graph_cls'; it serves ['node_cls', 'link_pred']" in (
        record.reason
    )
    assert (tmp_path / "run" / "result.json").is_file()


@pytest.fixture
def launched_elsewhere(tmp_path, monkeypatch):
    """A session launched in ``tmp_path/launch`` that has since moved to ``tmp_path/moved``."""
    (tmp_path / "launch" / "mirror").mkdir(parents=True)
    (tmp_path / "moved").mkdir()
    monkeypatch.setattr(launch, "IMPORT_DIR", tmp_path / "launch")
    monkeypatch.chdir(tmp_path / "moved")
    return tmp_path / "launch" / "mirror"


def test_a_relative_mirror_is_taken_from_the_launch_directory(make_cfg, launched_elsewhere):
    spec = resolve_run(make_cfg("paths.data_mirror=mirror"))
    assert spec.config["paths"]["data_mirror"] == str(launched_elsewhere)
    assert resolve_mirror("mirror") == launched_elsewhere


def test_a_relative_mirror_variable_is_taken_from_the_launch_directory(
    make_cfg, launched_elsewhere, monkeypatch
):
    monkeypatch.setenv(MIRROR_ENV, "mirror")
    spec = resolve_run(make_cfg())
    assert spec.config["paths"]["data_mirror"] == str(launched_elsewhere)
    assert resolve_mirror(None) == launched_elsewhere


def test_a_finished_run_still_counts_when_resumed_from_elsewhere(make_cfg, tmp_path):
    """Where data, outputs and the mirror live is not part of what ran: a sweep resumed
    from another folder, with another mirror, reuses its finished records."""
    from graphnetz.training.run import completed_record

    run_dir = tmp_path / "run"
    first = run_experiment(make_cfg("trainer.max_epochs=2", "resume=true"), run_dir)
    (tmp_path / "other_mirror").mkdir()
    moved = make_cfg(
        "trainer.max_epochs=2",
        "resume=true",
        f"paths.data_mirror={tmp_path / 'other_mirror'}",
        f"paths.output_dir={tmp_path / 'elsewhere'}",
    )
    assert completed_record(resolve_run(moved), run_dir) == first
    changed = make_cfg("trainer.max_epochs=3", "resume=true")
    assert completed_record(resolve_run(changed), run_dir) is None  # another result


def test_a_schema_1_record_is_run_again_on_resume_and_says_why(make_cfg, tmp_path, caplog):
    import logging

    from graphnetz.training.run import completed_record

    run_dir = tmp_path / "run"
    run_experiment(make_cfg("trainer.max_epochs=2"), run_dir)
    stored = json.loads((run_dir / "result.json").read_text())
    (run_dir / "result.json").write_text(json.dumps({**stored, "schema_version": 1}))
    with caplog.at_level(logging.INFO, logger="graphnetz"):
        assert completed_record(resolve_run(make_cfg("trainer.max_epochs=2")), run_dir) is None
    assert "schema 1" in caplog.text


def test_an_optimiser_value_contradicting_the_task_value_is_refused(make_cfg):
    # (Hydra wraps the task constructor's ValueError; the run records its message)
    with pytest.raises(InstantiationException, match=r"task.optimizer.lr=0.1 contradicts task.lr"):
        build_run(resolve_run(make_cfg("task.optimizer.lr=0.1")))


@pytest.mark.parametrize(("optimizer", "warned"), [("Adam", True), ("AdamW", False)])
def test_the_embedding_decay_warning_follows_the_optimiser(make_cfg, caplog, optimizer, warned):
    import logging

    # karate: one-hot ids; 0.1 x its 20 training nodes >= 1 pins the rows (5e-4 does not)
    cfg = make_cfg(f"task.optimizer._target_=torch.optim.{optimizer}", "task.weight_decay=0.1")
    with caplog.at_level(logging.WARNING, logger="graphnetz"):
        build_run(resolve_run(cfg))
    assert ("one-hot node ids" in caplog.text) is warned


def test_a_split_type_is_one_of_the_valid_ones_and_may_be_written_alone(make_cfg):
    spec = resolve_run(make_cfg("dataset=karate", "dataset.split=random"))
    assert spec.config["dataset"]["split"] == {"type": "random"}
    for bad in ("dataset.split=radnom", "dataset.split.type=radnom"):
        with pytest.raises(ValueError, match=r"'radnom' is not one of \['canonical', 'random'\]"):
            resolve_run(make_cfg("dataset=karate", bad))
    with pytest.raises(ValueError, match=r"dataset.split must be None.*got 3"):
        resolve_run(make_cfg("dataset=karate", "dataset.split=3"))
