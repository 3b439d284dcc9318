"""Fault injection: one sweep folder of 44 tiny runs through everything that goes wrong in
ordinary use — NaN losses, a raising model, a job killed mid-run and resumed, a truncated
record, an extension by more seeds and a concurrent second writer. Every finished result
survives, nothing finished is recomputed, and every bad run is named in the report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def launch(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: killed alone
    )


def finish(proc: subprocess.Popen, returncode: int = 0) -> str:
    out, _ = proc.communicate(timeout=1800)
    assert proc.returncode == returncode, out[-3000:]
    return out


def run(*args: str, returncode: int = 0) -> str:
    return finish(launch(*args), returncode)


def records(sweep: Path) -> dict[Path, str]:
    return {p: p.read_text() for p in sweep.rglob("result.json")}


def parsed(sweep: Path) -> list[dict]:
    return [json.loads(text) for text in records(sweep).values()]


def test_a_sweep_survives_every_injected_fault(tmp_path, data_dir):
    sweep = tmp_path / "faults"
    common = (
        "dataset=karate",
        "trainer.max_epochs=2",
        "resume=true",
        f"hydra.sweep.dir={sweep}",
        f"paths.data_dir={data_dir}",
    )
    grid = ("train.py", "-m", "model=gcn,mlp", "task.lr=0.01,1e30", *common)
    run(*grid, "seed=range(6)")  # 24 runs, the 12 with lr=1e30 diverge
    # the model raises; a sweep in which no run succeeded exits 1, and says so
    out = run("train.py", "-m", "model.num_layers=0", "seed=range(3)", *common, returncode=1)
    assert "sweep failed: no run succeeded" in out

    # a job killed mid-training (SIGKILL, so nothing is written on the way out)
    long_job = (
        "train.py",
        "-m",
        "model=sage",
        "seed=0",
        *common,
        "trainer.max_epochs=600",
        "checkpoint_every_s=0",
    )
    job = launch(*long_job)
    checkpoints: list[Path] = []
    deadline = time.monotonic() + 600
    while not checkpoints and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.05)
        checkpoints = list(sweep.glob("karate_node_cls_sage_s0_*/checkpoint.ckpt"))
    os.killpg(job.pid, signal.SIGKILL)
    job.communicate()
    assert checkpoints, "the long job never saved a checkpoint"
    killed_dir = checkpoints[0].parent
    assert not (killed_dir / "result.json").exists()

    # a record cut off mid-write
    victim = next(sweep.glob("karate_node_cls_gcn_s0_*/result.json"))
    while json.loads(victim.read_text())["config"]["task"]["lr"] != 0.01:
        victim = next(p for p in sweep.glob("karate_node_cls_gcn_s0_*/result.json") if p != victim)
    victim.write_text(victim.read_text()[:300])
    finished = {p: text for p, text in records(sweep).items() if p != victim}
    assert len(finished) == 26

    # extended to 10 seeds by two writers at once, then the killed job resumed
    writers = [launch(*grid, "seed=range(10)") for _ in range(2)]
    for writer in writers:
        finish(writer)
    resumed_log = run(*long_job)
    assert "resuming after epoch" in resumed_log

    after = records(sweep)
    assert all(after[p] == text for p, text in finished.items())  # nothing recomputed
    runs = parsed(sweep)
    assert len(runs) == 44 and len({r["identity"] for r in runs}) == 44
    by_status: dict[str, int] = {}
    for r in runs:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    assert by_status == {"ok": 21, "diverged": 20, "failed": 3}
    assert json.loads(victim.read_text())["status"] == "ok"  # rerun and complete
    sage = json.loads((killed_dir / "result.json").read_text())
    assert sage["status"] == "ok" and sage["resumed"]["from_epoch"] >= 1
    assert sage["epochs_run"] == 600

    proc = subprocess.run(
        [sys.executable, "analyze.py", str(sweep)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "runs: 21 ok, 3 failed, 20 diverged, 0 skipped, 0 unreadable" in proc.stderr
    report = (sweep / "report" / "report.md").read_text()
    assert "### Failed (3)" in report and "### Diverged (20)" in report
    assert report.count("num_layers") >= 3 and report.count("diverged at epoch") == 20
    summary = (sweep / "report" / "summary.csv").read_text()
    for model, n in (("gcn", 10), ("mlp", 10), ("sage", 1)):
        assert f"karate/node_cls,{model},accuracy,max,{n}," in summary
