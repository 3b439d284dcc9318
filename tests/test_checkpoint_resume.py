"""A run cut off mid-training continues from its checkpoint to the uninterrupted result."""

from __future__ import annotations

import json

import pytest

from graphnetz.run_record import RECORD_NAME
from graphnetz.training import checkpoint as ckpt
from graphnetz.training.checkpoint import CHECKPOINT_NAME, PeriodicCheckpoint
from graphnetz.training.run import run_experiment

KILL_AT = 7  # epoch during which the first process dies; checkpoints every epoch before


class Killed(BaseException):
    """Stands in for SIGKILL: no ``except Exception`` on the way up catches it."""


def kill_at(monkeypatch, epoch: int) -> None:
    original = PeriodicCheckpoint.on_train_epoch_start

    def hook(self, trainer, module):
        if trainer.current_epoch == epoch:
            raise Killed
        original(self, trainer, module)

    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_start", hook)


CASES = {
    # dropout, a fresh neighbour stack per step, train rows only
    "ml_node_cls lanc": [
        "dataset=ml_synthetic",
        "dataset.loader.num_nodes=120",
        "model=lanc",
        "model.hidden_channels=8",
        "task.selection=best_val",
        "task.patience=100",
    ],
    # neighbour sampling in training
    "ml_node_cls sage_sampled": [
        "dataset=ml_synthetic",
        "dataset.loader.num_nodes=120",
        "model=sage_sampled",
        "model.hidden_channels=8",
    ],
    # DGI pre-training before epoch 0 must not run again on resume
    "node_cls gat + DGI": [
        "dataset=karate",
        "model=gat",
        "model.hidden_channels=8",
        "task.dgi_pretrain_epochs=3",
    ],
    # shuffled mini-batches (a DataLoader iterator per epoch draws from the global RNG)
    "graph_reg gcn": [
        "dataset=triangles",
        "dataset.loader.num_graphs=60",
        "model=gcn",
        "model.hidden_channels=8",
    ],
}


@pytest.mark.parametrize("overrides", CASES.values(), ids=CASES.keys())
def test_a_run_killed_mid_training_resumes_to_the_uninterrupted_result(
    make_cfg, tmp_path, monkeypatch, overrides
):
    common = [*overrides, "trainer.max_epochs=14", "seed=3", "resume=true"]
    whole = run_experiment(make_cfg(*common, "checkpoint_every_s=null"), tmp_path / "whole")
    assert whole.status == "ok", whole.reason

    cfg = make_cfg(*common, "checkpoint_every_s=0")
    run_dir = tmp_path / "killed"
    with monkeypatch.context() as patch:
        kill_at(patch, KILL_AT)
        with pytest.raises(Killed):
            run_experiment(cfg, run_dir)
    assert (run_dir / CHECKPOINT_NAME).is_file() and not (run_dir / RECORD_NAME).exists()

    resumed = run_experiment(cfg, run_dir)
    assert resumed.status == "ok", resumed.reason
    assert resumed.resumed["from_epoch"] == KILL_AT
    assert resumed.history == whole.history  # every epoch's metrics, bit for bit
    assert resumed.metrics == whole.metrics
    assert resumed.wall_time_s > resumed.resumed["elapsed_s_before"] > 0
    assert not list(run_dir.glob(CHECKPOINT_NAME + "*"))  # finished: removed
    assert json.loads((run_dir / RECORD_NAME).read_text())["resumed"]["from_epoch"] == KILL_AT


def _killed_run(make_cfg, run_dir, monkeypatch, *overrides):
    cfg = make_cfg(
        "dataset=karate", "trainer.max_epochs=12", "checkpoint_every_s=0", "resume=true", *overrides
    )
    with monkeypatch.context() as patch:
        kill_at(patch, KILL_AT)
        with pytest.raises(Killed):
            run_experiment(cfg, run_dir)
    return cfg


def test_a_checkpoint_of_another_config_is_not_resumed(make_cfg, tmp_path, monkeypatch):
    _killed_run(make_cfg, tmp_path, monkeypatch, "task.lr=0.05")
    record = run_experiment(
        make_cfg("dataset=karate", "trainer.max_epochs=12", "checkpoint_every_s=0", "resume=true"),
        tmp_path,
    )
    assert record.status == "ok" and record.resumed is None
    assert record.epochs_run == 12


def test_a_checkpoint_written_on_another_kind_of_device_is_not_resumed(
    make_cfg, tmp_path, monkeypatch, caplog
):
    """A GPU run's checkpoint resumed on a CPU host (or the reverse) would mix two
    devices' arithmetic in one run (and a CUDA checkpoint cannot even load there)."""
    import torch

    cfg = _killed_run(make_cfg, tmp_path, monkeypatch)
    path = tmp_path / CHECKPOINT_NAME
    saved = torch.load(path, map_location="cpu", weights_only=False)
    assert saved[ckpt.STATE_KEY]["device"] == "cpu"
    saved[ckpt.STATE_KEY]["device"] = "cuda"
    torch.save(saved, path)
    record = run_experiment(cfg, tmp_path)
    assert record.status == "ok" and record.resumed is None and record.epochs_run == 12
    assert "written by a run on cuda, this one trains on cpu" in caplog.text


def test_without_resume_a_run_starts_over(make_cfg, tmp_path, monkeypatch):
    cfg = _killed_run(make_cfg, tmp_path, monkeypatch)
    cfg.resume = False
    record = run_experiment(cfg, tmp_path)
    assert record.resumed is None and record.epochs_run == 12


def test_an_unreadable_checkpoint_is_ignored(make_cfg, tmp_path, monkeypatch):
    cfg = _killed_run(make_cfg, tmp_path, monkeypatch)
    (tmp_path / CHECKPOINT_NAME).write_bytes(b"cut off mid-write")
    record = run_experiment(cfg, tmp_path)
    assert record.status == "ok" and record.resumed is None


def test_checkpoint_interval_is_checked(make_cfg, tmp_path):
    record = run_experiment(
        make_cfg("dataset=karate", "trainer.max_epochs=2", "checkpoint_every_s=-5"), tmp_path
    )
    assert record.status == "failed"
    assert "checkpoint_every_s" in record.reason and "-5" in record.reason


def test_rng_state_round_trips():
    import random

    import numpy as np
    import torch

    state = ckpt.rng_state()
    draws = (torch.rand(3), np.random.rand(3), random.random())
    ckpt.set_rng_state(state)
    again = (torch.rand(3), np.random.rand(3), random.random())
    assert torch.equal(draws[0], again[0]) and np.array_equal(draws[1], again[1])
    assert draws[2] == again[2]


def test_an_empty_local_group_does_not_make_a_complete_run_foreign(make_cfg, tmp_path):
    """A sweep made on a machine with an empty conf/local/default.yaml (``local: {}`` in
    its records) resumes on a clone without one, and the other way round."""
    from omegaconf import OmegaConf

    from graphnetz.training.resolve import resolve_run
    from graphnetz.training.run import completed_record

    cfg = make_cfg("dataset=karate", "trainer.max_epochs=2")
    record = run_experiment(cfg, tmp_path)
    assert completed_record(resolve_run(cfg), tmp_path) is not None
    stored = json.loads((tmp_path / RECORD_NAME).read_text())
    stored["config"]["local"] = {}
    (tmp_path / RECORD_NAME).write_text(json.dumps(stored))
    assert completed_record(resolve_run(cfg), tmp_path).metrics == record.metrics
    with_setting = OmegaConf.create({**OmegaConf.to_container(cfg), "local": {"x": 1}})
    assert completed_record(resolve_run(with_setting), tmp_path) is None  # a non-empty group counts
