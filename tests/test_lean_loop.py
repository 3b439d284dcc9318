"""The lean fit loop gives Lightning's result bit for bit, and steps aside where it cannot."""

from __future__ import annotations

import pytest
import torch

from graphnetz.training import lean_loop
from graphnetz.training.checkpoint import CHECKPOINT_NAME, PeriodicCheckpoint
from graphnetz.training.lean_loop import LeanLoop
from graphnetz.training.resolve import ConfigError, resolve_run
from graphnetz.training.run import run_experiment

TINY = ["model.hidden_channels=8", "seed=5"]
CASES = {
    # full batch, automatic optimisation
    "node_cls gcn": ["dataset=karate", "model=gcn", "trainer.max_epochs=12"],
    # DGI pre-training in on_train_start, after epoch 0's loader iterator draws its seed
    "node_cls gat + DGI": [
        "dataset=karate",
        "model=gat",
        "trainer.max_epochs=6",
        "task.dgi_pretrain_epochs=2",
    ],
    # manual optimisation, shuffled mini-batches drawn from the global generator
    "graph_reg gcn": [
        "dataset=triangles",
        "dataset.loader.num_graphs=40",
        "model=gcn",
        "trainer.max_epochs=5",
    ],
    # manual optimisation, fresh negatives every step
    "link_pred sage": ["dataset=karate", "task=link_pred", "model=sage", "trainer.max_epochs=8"],
    # early stopping sets the stop flag; evaluation every second epoch
    "ml_node_cls lanc, patience": [
        "dataset=ml_synthetic",
        "dataset.loader.num_nodes=80",
        "model=lanc",
        "trainer.max_epochs=40",
        "trainer.check_val_every_n_epoch=2",
        "task.selection=best_val",
        "task.patience=3",
    ],
}


@pytest.fixture
def lean_fits(monkeypatch) -> list[LeanLoop]:
    """The lean loops that trained a run (empty: Lightning's fit loop did)."""
    seen: list[LeanLoop] = []
    fit = LeanLoop.fit

    def spy(self, *args, **kwargs):
        seen.append(self)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(LeanLoop, "fit", spy)
    return seen


def _run(make_cfg, run_dir, *overrides):
    record = run_experiment(make_cfg(*overrides), run_dir)
    assert record.status == "ok", record.reason
    return record, torch.get_rng_state()


@pytest.mark.parametrize("overrides", CASES.values(), ids=CASES.keys())
def test_the_lean_loop_gives_lightnings_history_and_random_stream(
    make_cfg, tmp_path, lean_fits, overrides
):
    common = [*overrides, *TINY, "trainer.accelerator=cpu"]
    lightning, lightning_rng = _run(make_cfg, tmp_path / "a", *common, "fit_loop=lightning")
    assert not lean_fits
    lean, lean_rng = _run(make_cfg, tmp_path / "b", *common)
    assert len(lean_fits) == 1
    assert lean.history == lightning.history
    assert lean.metrics == lightning.metrics
    assert lean.selected_epoch == lightning.selected_epoch
    assert torch.equal(lean_rng, lightning_rng)  # the same draws, in the same number


def test_early_stopping_stops_the_lean_loop_early(make_cfg, tmp_path):
    record, _ = _run(make_cfg, tmp_path, *CASES["ml_node_cls lanc, patience"], *TINY)
    assert record.epochs_run < 20  # 40 epochs, evaluated every second: 20 rows at most


@pytest.mark.parametrize(
    "override, reason",
    [
        ("+trainer.gradient_clip_val=1.0", "trainer.gradient_clip_val is set"),
        ("trainer.devices=2", "trainer.devices=2"),
        ("fit_loop=lightning", None),
    ],
)
def test_settings_the_lean_loop_does_not_reproduce_go_to_lightning(
    make_cfg, tmp_path, lean_fits, override, reason
):
    cfg = make_cfg("dataset=karate", "trainer.max_epochs=2", override)
    if reason is not None:
        spec = resolve_run(cfg)
        refusal = lean_loop.lean_fit_refusal(spec.config["trainer"], _module(spec), [None])
        assert refusal == reason
    if override != "trainer.devices=2":  # (this machine has one CPU device to give)
        assert run_experiment(cfg, tmp_path).status == "ok"
        assert not lean_fits


def _module(spec):
    from graphnetz.training.pipeline import build_run

    built = build_run(spec)
    built.module.eval_loaders = built.data.eval_loaders
    return built.module


def test_an_unknown_fit_loop_names_the_valid_ones(make_cfg):
    with pytest.raises(ConfigError, match=r"fit_loop='fast'.*\['auto', 'lightning'\]"):
        resolve_run(make_cfg("fit_loop=fast"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="the machine has a GPU")
def test_a_gpu_accelerator_without_a_gpu_says_so_before_the_run(make_cfg):
    with pytest.raises(ConfigError, match=r"trainer.accelerator='gpu' needs a CUDA GPU.*cpu"):
        resolve_run(make_cfg("trainer.accelerator=gpu"))
    resolve_run(make_cfg("trainer.accelerator=cpu"))  # and the others pass


def test_apples_mps_is_refused_and_auto_stays_on_the_cpu_there(make_cfg, tmp_path, monkeypatch):
    """MPS lacks sparse CSR tensors and float64: a Mac's runs must not land on it."""
    from graphnetz.training import accelerators, pipeline

    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    monkeypatch.setattr(accelerators, "cuda_available", lambda: False)
    assert not accelerators.accelerator_available()
    with pytest.raises(ConfigError, match=r"accelerator='mps' is not supported.*sparse CSR"):
        resolve_run(make_cfg("trainer.accelerator=mps"))
    with pytest.raises(ConfigError, match=r"accelerator='gpu' needs a CUDA GPU"):
        resolve_run(make_cfg("trainer.accelerator=gpu"))
    trainers = []
    instantiate = pipeline.instantiate

    def spy(config, **kwargs):
        if "callbacks" in kwargs:  # the trainer (the task module is instantiated here too)
            trainers.append(kwargs)
        return instantiate(config, **kwargs)

    monkeypatch.setattr(pipeline, "instantiate", spy)
    cfg = make_cfg(
        "dataset=karate", "model=gcn", *TINY, "trainer.max_epochs=2", "fit_loop=lightning"
    )
    assert run_experiment(cfg, tmp_path / "run").status == "ok"
    assert [t.get("accelerator") for t in trainers] == ["cpu"]  # Lightning's auto took MPS


class Killed(BaseException):
    """Stands in for SIGKILL: no ``except Exception`` on the way up catches it."""


RESUMABLE = ["dataset=karate", "model=gcn", *TINY, "trainer.max_epochs=6", "resume=true"]


def _whole_and_cut(make_cfg, tmp_path, monkeypatch, *cut_overrides):
    """The uninterrupted run's record, and the run directory of the same run killed at
    the start of epoch 3 with a checkpoint saved after every epoch."""
    whole, _ = _run(make_cfg, tmp_path / "whole", *RESUMABLE, "checkpoint_every_s=null")
    run_dir = tmp_path / "cut"
    with monkeypatch.context() as patch:

        def die_at_epoch_3(self, trainer, module):
            if trainer.current_epoch == 3:
                raise Killed

        patch.setattr(PeriodicCheckpoint, "on_train_epoch_start", die_at_epoch_3)
        with pytest.raises(Killed):
            run_experiment(make_cfg(*RESUMABLE, "checkpoint_every_s=0", *cut_overrides), run_dir)
    return whole, run_dir


@pytest.mark.parametrize("first_loop", ["lightning", "auto"])
def test_a_killed_run_resumes_in_the_loop_that_wrote_its_checkpoint(
    make_cfg, tmp_path, monkeypatch, lean_fits, first_loop
):
    """A checkpoint of Lightning's loop (an older version, or fit_loop=lightning) resumes
    through Lightning under fit_loop=auto, a lean one through the lean loop; both reach
    the uninterrupted result."""
    whole, run_dir = _whole_and_cut(make_cfg, tmp_path, monkeypatch, f"fit_loop={first_loop}")
    lean_written = lean_loop.is_lean_checkpoint(run_dir / CHECKPOINT_NAME)
    assert lean_written == (first_loop == "auto")
    lean_fits.clear()
    resumed, _ = _run(make_cfg, run_dir, *RESUMABLE, "checkpoint_every_s=0")
    assert resumed.resumed["from_epoch"] == 3
    assert bool(lean_fits) == lean_written
    assert resumed.history == whole.history and resumed.metrics == whole.metrics


def test_a_lean_checkpoint_that_lightning_would_resume_starts_the_run_over(
    make_cfg, tmp_path, monkeypatch, caplog
):
    """Lightning's loop cannot read the lean loop's checkpoint (a run started on a CPU
    host, resumed where a GPU makes ``accelerator=auto`` pick Lightning): the run says so
    and starts over, reaching the uninterrupted result, not a KeyError."""
    whole, run_dir = _whole_and_cut(make_cfg, tmp_path, monkeypatch)
    assert lean_loop.is_lean_checkpoint(run_dir / CHECKPOINT_NAME)
    record, _ = _run(make_cfg, run_dir, *RESUMABLE, "checkpoint_every_s=0", "fit_loop=lightning")
    assert "written by the lean CPU loop" in caplog.text and "starting the run over" in caplog.text
    assert record.resumed["from_epoch"] == 0
    assert "written by the lean CPU loop" in record.resumed["restarted"]
    assert record.history == whole.history and record.metrics == whole.metrics
