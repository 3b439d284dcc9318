"""``python -m graphnetz status``: a sweep's runs per cell, and the dry run of its overrides."""

from __future__ import annotations

import json

import pytest

from graphnetz.__main__ import main
from graphnetz.run_record import RECORD_NAME
from graphnetz.training.checkpoint import CHECKPOINT_NAME, PeriodicCheckpoint
from graphnetz.training.resolve import resolve_run
from graphnetz.training.run import run_experiment

TINY = ("dataset=karate", "trainer.max_epochs=3")


class Killed(BaseException):
    """Stands in for SIGKILL."""


@pytest.fixture
def sweep(make_cfg, tmp_path, monkeypatch):
    """Seeds 0, 1 ok, 2 failed (its record says so), 3 cut off after epoch 1, 4 missing."""
    folder = tmp_path / "sweep"

    def run_dir(seed: int):
        return folder / resolve_run(make_cfg(*TINY, f"seed={seed}")).run_dir_name

    for seed in (0, 1, 2):
        run_experiment(make_cfg(*TINY, f"seed={seed}"), run_dir(seed))
    failed = run_dir(2) / RECORD_NAME
    raw = json.loads(failed.read_text())
    raw.update(status="failed", reason="RuntimeError: out of memory\nsecond line", error="tb")
    failed.write_text(json.dumps(raw))

    def hook(self, trainer, module):
        if trainer.current_epoch == 2:
            raise Killed

    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_start", hook, raising=False)
    with pytest.raises(Killed):
        run_experiment(make_cfg(*TINY, "seed=3", "checkpoint_every_s=0"), run_dir(3))
    assert (run_dir(3) / CHECKPOINT_NAME).is_file()
    return folder


def status(capsys, *args: str) -> list[str]:
    assert main(["status", *map(str, args)]) == 0
    return capsys.readouterr().out.splitlines()


def cells(lines: list[str]) -> dict[str, list[str]]:
    header = next(line.split() for line in lines if line.startswith("task "))
    rows = [line.split() for line in lines if line.startswith("karate/")]
    return {row[1]: dict(zip(header[1:], row[1:], strict=False)) for row in rows}


def test_status_counts_each_state_per_cell(sweep, capsys):
    lines = status(capsys, sweep, *TINY, "seed=range(5)")
    row = cells(lines)["gcn"]
    assert (row["ok"], row["failed"], row["cut-off"], row["missing"]) == ("2", "1", "1", "1")
    assert any("seed=2: RuntimeError: out of memory" in line for line in lines)
    assert not any("second line" in line for line in lines)  # the error's first line only


def test_the_dry_run_lists_what_the_sweep_would_launch(sweep, capsys):
    lines = status(capsys, sweep, *TINY, "seed=range(5)", "model=gcn,mlp")
    summary = next(line for line in lines if line.startswith("dry run"))
    assert "10 runs, 2 already done, 8 to run" in summary
    todo = [line for line in lines if line.startswith("  run ")]
    assert len(todo) == 8
    assert any("[cut off] karate/node_cls gcn seed=3" in line for line in todo)
    assert any("[failed] karate/node_cls gcn seed=2" in line for line in todo)
    assert cells(lines)["mlp"]["missing"] == "5"


def test_without_overrides_the_missing_runs_are_said_to_be_unknown(sweep, capsys):
    lines = status(capsys, sweep)
    assert any("missing runs are not known" in line for line in lines)
    assert cells(lines)["gcn"]["ok"] == "2"


def test_a_missing_sweep_directory_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["status", str(tmp_path / "nope")])
    assert exit_.value.code == 2 and "nope" in capsys.readouterr().err
