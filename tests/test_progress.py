"""Sweep progress (done / total, failed, elapsed, ETA), the end-of-sweep summary and exit
code, and the per-run progress cadence."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra.types import RunMode
from omegaconf import OmegaConf

from graphnetz.sweep import progress as progress_module
from graphnetz.sweep.callbacks import append_event, read_events, record_status, tally_of
from graphnetz.sweep.jobs import job_count
from graphnetz.sweep.progress import ProgressDisplay, SweepTally, clock, progress_line
from graphnetz.sweep.threads import default_threads
from graphnetz.tasks import base as task_base

REPO = Path(__file__).resolve().parents[1]


def test_the_progress_line_counts_and_estimates():
    tally = SweepTally(total=10)
    for status in ("ok", "ok", "failed", "diverged"):
        tally.add(status)
    tally.add("ok", reused=True)
    # 4 runs trained in 120 s -> 30 s each; 5 runs left -> 150 s
    assert progress_line(tally, 120.0) == (
        "sweep: 5/10 runs done, 2 failed, elapsed 0:02:00, ETA 0:02:30"
    )
    assert tally.summary() == (
        "ok 3, failed 1, diverged 1, skipped 0 (1 reused from an earlier sweep)"
    )


def test_no_estimate_before_a_run_of_this_sweep_finished():
    tally = SweepTally(total=3)
    tally.add("ok", reused=True)
    assert tally.eta_s(50.0) is None and clock(None) == "?"
    assert clock(3725) == "1:02:05"


def test_a_status_this_version_does_not_know_is_shown_as_it_is(tmp_path):
    for name, status in (("a", "ok"), ("b", "diverged"), ("c", "quarantined")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps({"status": status}))
    (tmp_path / "d").mkdir()  # a job that never wrote its record
    events = [{"run_dir": str(tmp_path / n), "started": 0.0} for n in "abcd"]
    tally = tally_of(events, total=4)
    assert tally.summary() == "ok 1, failed 0, diverged 1, skipped 0, no record 1, quarantined 1"
    assert tally.failed == 2  # diverged and the missing record
    assert record_status(tmp_path / "nowhere") == "no record"


def test_the_tally_reads_each_record_where_the_job_left_it(tmp_path):
    """A job whose folder held another run's record wrote its own next to it, and one
    resumed from a record elsewhere points there: the tally counts those records."""
    for name, status in (("0", "diverged"), ("0_abc", "ok"), ("old/run", "ok")):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "result.json").write_text(json.dumps({"status": status}))
    events = [
        {"run_dir": str(tmp_path / "0"), "record_dir": str(tmp_path / "0_abc"), "started": 0.0},
        {"run_dir": str(tmp_path / "1"), "record_dir": str(tmp_path / "old/run"), "started": 0.0},
    ]
    assert tally_of(events, total=2).summary().startswith("ok 2, failed 0, diverged 0")


def test_events_of_another_sweep_and_half_lines_are_ignored(tmp_path):
    path = tmp_path / ".sweep_events.jsonl"
    append_event(path, {"token": "mine", "run_dir": "x"})
    append_event(path, {"token": "theirs", "run_dir": "y"})
    with path.open("a") as fh:
        fh.write('{"token": "mine", "run_')  # being written right now
    assert [e["run_dir"] for e in read_events(path, "mine")] == ["x"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_log_file_gets_plain_lines_at_most_every_interval(monkeypatch):
    clock_ = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock_)
    log = io.StringIO()  # not a terminal: no bar, no carriage returns
    display = ProgressDisplay(total=4, every_s=30, stream=log)
    tally = SweepTally(total=4)
    for _ in range(4):
        tally.add("ok")
        clock_.now += 10  # a run every 10 s
        display.show(tally)
    display.show(tally, final=True)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert lines == [
        "sweep: 1/4 runs done, 0 failed, elapsed 0:00:10, ETA 0:00:30",
        "sweep: 4/4 runs done, 0 failed, elapsed 0:00:40, ETA 0:00:00",
    ]


def test_a_terminal_gets_a_bar():
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Tty()
    display = ProgressDisplay(total=2, stream=screen)
    tally = SweepTally(total=2)
    tally.add("failed")
    display.show(tally, final=True)
    assert "1/2" in screen.getvalue() and "failed=1" in screen.getvalue()


def multirun_config(
    *overrides: str, launcher: dict | None = None, num_threads=None, mode=RunMode.MULTIRUN
):
    return OmegaConf.create(
        {
            "num_threads": num_threads,
            "hydra": {
                "mode": mode,
                "overrides": {"task": list(overrides)},
                "sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"},
                "launcher": launcher
                or {"_target_": "hydra._internal.core_plugins.basic_launcher.BasicLauncher"},
            },
        }
    )


def test_the_total_is_the_number_of_jobs_the_sweep_launches():
    config = multirun_config("model=gcn,gat,mlp", "seed=range(4)", "dataset=cora")
    assert job_count(config) == 12
    config.hydra.sweeper._target_ = "hydra_plugins.some.OtherSweeper"
    assert job_count(config) is None  # decided as it goes


JOBLIB = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
SUBMITIT_LOCAL = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"
POOL = "hydra_plugins.graphnetz_launchers.pool_launcher.PoolLauncher"


@pytest.mark.parametrize(
    ("launcher", "num_threads", "expected"),
    [
        ({"_target_": JOBLIB, "n_jobs": 2}, None, 1),
        ({"_target_": JOBLIB, "n_jobs": -1}, None, 1),
        ({"_target_": JOBLIB, "n_jobs": 1}, None, None),
        ({"_target_": JOBLIB, "n_jobs": 4}, 3, None),  # set explicitly: the run sets it
        (None, None, None),  # one job at a time: torch's default
        ({"_target_": SUBMITIT_LOCAL}, None, 1),  # a process per job, all at once
        ({"_target_": POOL, "n_jobs": 2}, None, 1),
    ],
)
def test_one_torch_thread_per_job_when_joblib_runs_several(launcher, num_threads, expected):
    config = multirun_config(launcher=launcher, num_threads=num_threads)
    assert default_threads(config) == expected


def test_a_single_run_keeps_torchs_threads_whatever_launcher_the_config_names():
    config = multirun_config(launcher={"_target_": POOL, "n_jobs": 2}, mode=RunMode.RUN)
    assert default_threads(config) is None


def test_a_sweep_where_no_run_succeeds_exits_non_zero(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "train.py",
            "-m",
            "model.num_layers=0,-1",  # both refused: failed runs
            "dataset=karate",
            "trainer.max_epochs=2",
            f"hydra.sweep.dir={sweep}",
            f"paths.data_dir={data_dir}",
            "hydra.callbacks.sweep.progress_every_s=0",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "sweep: 2/2 runs done, 2 failed" in proc.stderr
    assert "sweep summary: ok 0, failed 2, diverged 0, skipped 0" in proc.stderr
    assert "no run succeeded" in proc.stderr
    assert "\r" not in proc.stderr  # a log file stays readable


def test_per_run_progress_is_at_most_one_line_every_30_s(monkeypatch, caplog):
    clock_ = Clock()
    monkeypatch.setattr(task_base.time, "perf_counter", clock_)
    task = task_base.GraphTask.__new__(task_base.GraphTask)
    task._last_progress, task.progress_label, task.primary_metric = clock_.now, "run", "accuracy"
    task.__dict__["trainer"] = type("T", (), {"max_epochs": 99})
    with caplog.at_level(logging.INFO, logger="graphnetz"):
        for epoch in range(90):  # one epoch a second for 90 s
            clock_.now += 1
            task._report_progress({"epoch": epoch, "train_loss": 0.5, "val_accuracy": 0.7})
    assert len(caplog.records) == 3  # at 30, 60 and 90 s


def test_a_finished_run_logs_its_test_score_or_inside_a_search_its_validation_score(
    make_cfg, caplog
):
    from graphnetz.training.run import run_experiment, validation_scores_only

    cfg = make_cfg("dataset=karate", "model=mlp", "trainer.max_epochs=2")
    with caplog.at_level(logging.INFO, logger="graphnetz"):
        record = run_experiment(cfg)
        with validation_scores_only():
            run_experiment(cfg)
    lines = [r.getMessage() for r in caplog.records if "seed=" in r.getMessage()]
    assert f"test accuracy={record.metrics['test']['accuracy']:.4f}" in lines[0]
    assert f"val accuracy={record.metrics['val']['accuracy']:.4f}" in lines[-1]
    assert "test" not in lines[-1]
