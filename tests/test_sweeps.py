"""Real ``-m`` sweeps in a subprocess, the way users run them, then ``analyze.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def run_dir(sweep: Path, prefix: str) -> Path:
    """The one run directory of ``sweep`` whose name (``<prefix>_<identity>``) starts so."""
    (found,) = sweep.glob(f"{prefix}_*")
    return found


def records(sweep: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(sweep.glob("*/result.json"))]


def test_multirun_then_analyze(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train.py",
        "-m",
        "model=gcn,mlp",
        "seed=0,1",
        "dataset=karate",
        "trainer.max_epochs=5",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = records(sweep)
    assert len(found) == 4 and {r["status"] for r in found} == {"ok"}
    assert {(r["model"], r["seed"]) for r in found} == {
        ("gcn", 0),
        ("gcn", 1),
        ("mlp", 0),
        ("mlp", 1),
    }
    assert len({r["run_dir"] for r in found}) == 4  # one directory per job
    # the default sweeper is ours, found by Hydra's plugin scan from a plain `python train.py`
    assert "GraphnetzBasicSweeper" in (sweep / "multirun.yaml").read_text()

    proc = run_cli("analyze.py", str(sweep))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = (sweep / "report" / "summary.csv").read_text().strip().splitlines()
    assert len(summary) == 3  # header + one row per (task, model)
    report = (sweep / "report" / "report.md").read_text()
    assert "| karate/node_cls | accuracy ↑ | gcn | 2 |" in report
    assert "| karate/node_cls | accuracy ↑ | mlp | 2 |" in report


def test_a_failing_run_does_not_stop_the_sweep(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train.py",
        "-m",
        "model.num_layers=0,2",
        "dataset=karate",
        "trainer.max_epochs=2",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    statuses = sorted(r["status"] for r in records(sweep))
    assert statuses == ["failed", "ok"]
    failed = next(r for r in records(sweep) if r["status"] == "failed")
    assert "num_layers" in failed["reason"] and failed["error"]

    proc = run_cli("analyze.py", str(sweep))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Failed (1)" in (sweep / "report" / "report.md").read_text()


def test_unknown_model_lists_valid_choices(tmp_path):
    proc = run_cli("train.py", "model=gcnn", f"paths.output_dir={tmp_path}")
    assert proc.returncode != 0
    message = proc.stderr + proc.stdout
    assert "gcnn" in message
    for valid in ("gcn", "gat", "sage", "gt", "mlp"):
        assert f"\t{valid}\n" in message or f" {valid}\n" in message


def test_two_jobs_that_are_one_run_are_refused_before_any_runs(tmp_path, data_dir):
    """num_threads does not change which run it is: both jobs would write one folder."""
    sweep = tmp_path / "sweep"
    base = ["train.py", "-m", "dataset=karate", "model=gcn", "seed=0", "trainer.max_epochs=2"]
    base += [f"paths.data_dir={data_dir}", f"hydra.sweep.dir={sweep}"]
    proc = run_cli(*base, "num_threads=1,2")
    assert proc.returncode == 1
    assert "the sweep holds the same run twice (karate_node_cls_gcn_s0_" in proc.stderr
    assert "Traceback" not in proc.stderr and not list(sweep.glob("karate_*"))


def test_unknown_dataset_lists_valid_choices(tmp_path):
    proc = run_cli("train.py", "dataset=coraa", f"paths.output_dir={tmp_path}")
    assert proc.returncode != 0
    message = proc.stderr + proc.stdout
    assert "coraa" in message and "cora" in message and "karate" in message


def test_truncated_record_does_not_crash_analyze(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train.py",
        "-m",
        "seed=0,1,2",
        "dataset=karate",
        "trainer.max_epochs=2",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    victim = run_dir(sweep, "karate_node_cls_gcn_s0") / "result.json"
    victim.write_text(victim.read_text()[:200])  # a half-written file from a killed job
    proc = run_cli("analyze.py", str(sweep))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (sweep / "report" / "report.md").read_text()
    assert "Unreadable (1)" in report and victim.parent.name in report


def test_real_sweep_gives_the_full_report(tmp_path, data_dir, mirror):
    """2 datasets x 3 models x 5 seeds through train.py, then every report artefact."""
    import pandas as pd

    from graphnetz.report import BenchmarkReport

    sweep = tmp_path / "sweep"
    proc = run_cli(
        "train.py",
        "-m",
        "dataset=karate,cora",
        "model=gcn,sage,mlp",
        "seed=range(5)",
        "trainer.max_epochs=3",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
        f"paths.data_mirror={mirror}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(records(sweep)) == 30

    proc = run_cli("analyze.py", str(sweep), "--pairwise", "wilcoxon")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = sweep / "report"
    for name in (
        "report.md",
        "report.json",
        "results.csv",
        "summary.csv",
        "tables/summary.tex",
        "tables/pairwise.tex",
        "figures/cd_diagram.png",
        "figures/cd_diagram.pdf",
        "figures/dashboard.png",
        "figures/dashboard.pdf",
    ):
        assert (out / name).is_file(), name
    assert "Friedman" in (out / "report.md").read_text()

    from_dirs = BenchmarkReport.from_run_dirs([sweep])
    from_json = BenchmarkReport.from_json(out / "report.json")
    from_csv = BenchmarkReport.from_csv(out / "results.csv")
    expected = from_dirs.summary()
    pd.testing.assert_frame_equal(from_json.summary(), expected)
    pd.testing.assert_frame_equal(from_csv.summary(), expected)
    assert len(expected) == 6 and set(expected["n"]) == {5}


def test_resume_skips_complete_runs_and_reruns_the_rest(tmp_path, data_dir):
    sweep = tmp_path / "sweep"
    args = (
        "train.py",
        "-m",
        "seed=0,1",
        "dataset=karate",
        "trainer.max_epochs=2",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
    )
    assert run_cli(*args).returncode == 0  # a plain sweep, later resumed
    kept = run_dir(sweep, "karate_node_cls_gcn_s0") / "result.json"
    redo = run_dir(sweep, "karate_node_cls_gcn_s1") / "result.json"
    kept_before = kept.read_text()
    redo.write_text(redo.read_text()[:100])  # a job killed mid-write
    proc = run_cli(*args, "resume=true")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert kept.read_text() == kept_before  # untouched: not run again
    assert json.loads(redo.read_text())["status"] == "ok"  # rerun and complete
    assert "resumed" in proc.stderr + proc.stdout
