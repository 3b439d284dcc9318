"""A bad setting is refused before anything is built, by a :class:`ConfigError` that names
the key, the value and what is valid; a sweep that does not compose keeps its folder as
it was (no ``multirun.yaml`` overwritten, no folder left behind)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from graphnetz.models import GCN
from graphnetz.training.resolve import ConfigError, model_settings, resolve_run

REPO = Path(__file__).resolve().parents[1]
KARATE = ("dataset=karate", "trainer.max_epochs=3", "num_threads=1")


def refusal(make_cfg, *overrides: str) -> str:
    with pytest.raises(ConfigError) as err:
        resolve_run(make_cfg(*KARATE, *overrides))
    return str(err.value)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("trainer.deterministic=maybe", ["trainer.deterministic='maybe'", "true", "warn"]),
        ("trainer.check_val_every_n_epoch=0", ["trainer.check_val_every_n_epoch", "got 0"]),
        ("task.lr=abc", ["task.lr", "positive", "'abc'"]),
        ("task.lr=true", ["task.lr", "got True"]),
        ("task.weight_decay=abc", ["task.weight_decay", ">= 0", "'abc'"]),
        ("task.patience=abc", ["task.patience", "integer >= 1", "null", "'abc'"]),
        ("task.patience=2.5", ["task.patience", "integer >= 1", "2.5"]),
        ("model.dropout=abc", ["model.dropout", "[0, 1)", "'abc'"]),
        ("task.encoder_dropout=1.5", ["task.encoder_dropout", "[0, 1)", "1.5"]),
        ("num_threads=abc", ["num_threads", "integer >= 1", "null", "'abc'"]),
        ("num_threads=-2", ["num_threads", "integer >= 1", "-2"]),
        ("num_threads=0", ["num_threads", "integer >= 1", "got 0"]),
    ],
)
def test_a_bad_value_is_refused_naming_the_key_the_value_and_the_range(
    make_cfg, override, expected
):
    message = refusal(make_cfg, override)
    for part in expected:
        assert part in message, message


@pytest.mark.parametrize(
    "overrides",
    [
        ("trainer.deterministic=warn",),
        ("trainer.deterministic=false",),
        ("trainer.deterministic=null",),
        ("trainer.check_val_every_n_epoch=2",),
        ("task.lr=1", "task.weight_decay=0"),
        ("task.selection=best_val", "task.patience=3"),
        ("num_threads=null",),
        ("model.dropout=0",),
        ("+model.cached=true",),  # a layer's keyword (GCN.make_layer)
        ("model=sage", "+model.aggr=max"),
        ("model=gat", "+model.head_channels=8", "+model.activation=elu"),
        ("model=mlp", "+model.input_dropout=false"),
    ],
)
def test_valid_settings_still_resolve(make_cfg, overrides):
    resolve_run(make_cfg(*KARATE, *overrides))


def test_an_unknown_model_key_is_refused_naming_the_model_s_settings(make_cfg):
    message = refusal(make_cfg, "+model.unknown_key=1")
    assert message.startswith("unknown setting 'model.unknown_key' for model 'gcn' (GCN)")
    assert "did you mean" not in message
    assert "'cached'" in message and "'num_layers'" in message and "'name'" not in message
    assert "did you mean model.heads?" in refusal(make_cfg, "model=gat", "+model.head=2")


def test_models_taking_any_keyword_are_not_checked():
    class Layered(GCN):
        def make_layer(self, d_in, d_out, last, **kwargs):
            return super().make_layer(d_in, d_out, last)

    assert "cached" in model_settings(GCN)
    assert model_settings(Layered) is None
    assert model_settings(type("Plain", (), {"__init__": lambda self, **kw: None})) is None


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "train.py", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


def test_a_relaunch_that_does_not_compose_keeps_the_sweep_s_multirun_yaml(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    saved = "hydra:\n  overrides:\n    task:\n    - model=gcn\n    - seed=range(3)\n"
    (sweep / "multirun.yaml").write_text(saved)
    proc = run_cli(
        "-m", "model=gcn,mlpp", "seed=range(3)", *KARATE, "resume=true",
        f"hydra.sweep.dir={sweep}",
    )  # fmt: skip
    assert proc.returncode == 1 and "model/mlpp" in proc.stderr, proc.stderr[-2000:]
    assert (sweep / "multirun.yaml").read_text() == saved
    assert sorted(p.name for p in sweep.iterdir()) == ["multirun.yaml"]


def test_a_relaunch_of_no_runs_keeps_the_sweep_s_multirun_yaml(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    saved = "hydra:\n  overrides:\n    task:\n    - model=gcn\n    - seed=range(3)\n"
    (sweep / "multirun.yaml").write_text(saved)
    proc = run_cli("-m", "model=gcn", "seed=range(0)", *KARATE, f"hydra.sweep.dir={sweep}")
    assert "sweeps no value" in proc.stderr, proc.stderr[-2000:]
    assert (sweep / "multirun.yaml").read_text() == saved


def test_a_fresh_sweep_that_does_not_compose_leaves_no_folder(tmp_path):
    sweep = tmp_path / "fresh" / "sweep"
    proc = run_cli("-m", "model=gcn,mlpp", *KARATE, f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 1 and "model/mlpp" in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "fresh").exists()
