"""The report keys run records by identity: identical duplicates collapse, conflicting ones
are named, runs differing in a setting are separate entries, diverged runs are listed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_fixtures import schema2_record

from graphnetz.report import BenchmarkReport
from graphnetz.report.records import collect_csv

ROOT = Path(__file__).resolve().parents[1]


def record(seed: int, accuracy: float, lr: float = 0.01, **extra) -> dict:
    """A hand-written schema-2 record whose resolved config differs only in seed and lr."""
    config = {
        "seed": seed,
        "dataset": {"name": "karate"},
        "model": {"name": "gcn", "hidden_channels": 16},
        "task": {"lr": lr, "optimizer": {"lr": lr}},
        "trainer": {"max_epochs": 5},
        "paths": {"data_dir": f"/somewhere/{seed}"},
    }
    return schema2_record("karate/node_cls", "gcn", seed, config, accuracy, **extra)


def test_an_identical_duplicate_is_counted_once_silently(recwarn):
    report = BenchmarkReport.from_records([record(0, 0.5), record(1, 0.7), record(0, 0.5)])
    assert report.summary()["n"].tolist() == [2]
    assert report.failed == [] and not [w for w in recwarn if "duplicate" in str(w.message)]
    assert report.provenance["collapsed_duplicates"] == 1


def test_a_conflicting_duplicate_is_named_and_the_first_kept():
    report = BenchmarkReport.from_records([record(0, 0.5), record(1, 0.7), record(0, 0.9)])
    summary = report.summary()
    assert summary["n"].tolist() == [2] and summary["mean"].iloc[0] == pytest.approx(0.6)
    (conflict,) = report.failed
    assert conflict["status"] == "conflicting" and conflict["seed"] == 0
    assert "0.9" in conflict["error"] and "0.5" in conflict["error"]
    assert "Conflicting duplicates (1)" in report.to_markdown()


def test_runs_that_differ_in_a_setting_are_separate_labelled_entries():
    runs = [record(s, 0.5 + s / 10, lr=lr) for lr in (0.01, 0.2) for s in (0, 1, 2)]
    summary = BenchmarkReport.from_records(runs).summary()
    # task.optimizer.lr follows task.lr: the label names the setting once
    assert summary["model"].tolist() == ["gcn[task.lr=0.01]", "gcn[task.lr=0.2]"]
    assert summary["n"].tolist() == [3, 3]


def test_paths_and_seeds_never_label_a_model():
    summary = BenchmarkReport.from_records([record(0, 0.5), record(1, 0.6)]).summary()
    assert summary["model"].tolist() == ["gcn"]


def test_a_diverged_run_is_listed_and_not_analysed():
    diverged = record(2, float("nan"), status="diverged", reason="diverged at epoch 1: nan")
    report = BenchmarkReport.from_records([record(0, 0.5), record(1, 0.7), diverged])
    assert report.summary()["n"].tolist() == [2]
    assert [e["status"] for e in report.failed] == ["diverged"]
    assert "Diverged (1)" in report.to_markdown() and "epoch 1" in report.to_markdown()


def test_analyze_prints_every_count_on_the_console(tmp_path):
    runs = {
        "a": record(0, 0.5),
        "b": record(1, 0.7),
        "a_copy": record(0, 0.5),
        "a_other": record(0, 0.8),
        "nan": record(3, float("nan"), status="diverged", reason="diverged at epoch 0"),
        "bad": {**record(4, 0.1), "status": "failed", "reason": "ValueError: x", "error": "x"},
    }
    for name, raw in runs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(raw))
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "result.json").write_text('{"status": "ok", "ta')
    proc = subprocess.run(
        [sys.executable, str(ROOT / "analyze.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "runs: 2 ok, 1 failed, 1 diverged, 0 skipped, 1 unreadable, "
        "1 conflicting duplicates, 1 duplicates collapsed"
    ) in proc.stderr
    assert "UserWarning" not in proc.stderr


@pytest.mark.parametrize(("seed", "shown"), [("", "empty seed"), ("1.5", "seed 1.5")])
def test_a_csv_row_without_an_integer_seed_is_refused_with_its_line(tmp_path, seed, shown):
    path = tmp_path / "r.csv"
    path.write_text(f"task,model,seed,metric,value\nt,m,0,accuracy,0.5\nt,m,{seed},accuracy,0.6\n")
    with pytest.raises(ValueError, match=rf"line 3: {shown}"):
        collect_csv(path)
