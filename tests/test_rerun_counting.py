"""Reruns without ``resume=true`` (``<dir>_rerun<k>``) beside a run's record: the report,
``status`` and the reproduction scripts count one run per identity, a conflict names what
differs, and a rerun lands in the next sibling of the Hydra folder, saying so once."""

from __future__ import annotations

import json
import logging
import sys
from collections import Counter
from pathlib import Path

import pytest
from report_fixtures import schema2_record

from graphnetz.cli.status import merge
from graphnetz.cli.sweep_runs import found_runs
from graphnetz.report import BenchmarkReport
from graphnetz.report.records import collect_records, collect_run_dirs
from graphnetz.run_record import RECORD_NAME, RunRecord
from graphnetz.training.run import run_experiment

ROOT = Path(__file__).resolve().parents[1]
TINY = ("dataset=karate", "trainer.max_epochs=2")


def record(seed: int, status: str = "ok", accuracy: float = 0.5, **extra) -> dict:
    """A hand-written schema-2 record (its identity: that of its config)."""
    config = {
        "seed": seed,
        "dataset": {"name": "karate"},
        "model": {"name": "gcn", "hidden_channels": 16},
        "task": {"lr": 0.01},
        "trainer": {"max_epochs": 5},
    }
    overrides = {"status": status} if status == "ok" else {"status": status, "metrics": {}}
    raw = schema2_record("karate/node_cls", "gcn", seed, config, accuracy, **overrides | extra)
    if status == "failed":
        raw.setdefault("error", "Traceback: no data")
    if status in ("skipped", "diverged"):
        raw.setdefault("reason", f"{status} for a reason")
    return raw


def write(sweep: Path, name: str, raw: dict) -> None:
    (sweep / name).mkdir(parents=True)
    (sweep / name / RECORD_NAME).write_text(json.dumps(raw))


def status_counts(sweep: Path) -> Counter:
    return Counter(run.state for run in merge(found_runs(sweep), []))


def analyze_counts(sweep: Path) -> Counter:
    counts = collect_run_dirs([sweep]).counts()
    return Counter({s: counts[k] for s, k in [("ok", "analysed")] + [(s, s) for s in counts]})


def test_the_report_ranks_states_in_the_order_status_does():
    from graphnetz.cli.sweep_runs import STATES
    from graphnetz.report.records import STATES as REPORT_STATES

    assert REPORT_STATES == tuple(s for s in STATES if s in REPORT_STATES)


@pytest.mark.parametrize("state", ["skipped", "diverged", "failed"])
def test_a_worse_rerun_beside_an_ok_record_is_no_extra_run(state, tmp_path):
    sweep = tmp_path / "sweep"
    for seed in range(4):
        write(sweep, f"s{seed}", record(seed))
        write(sweep, f"s{seed}_rerun1", record(seed, state))
    with pytest.warns(UserWarning, match=rf"4 {state} records beside an analysed record"):
        acc = collect_run_dirs([sweep])
    assert acc.counts()["analysed"] == 4 and acc.failed == [] and acc.skipped == []
    assert len(acc.superseded) == 4 and acc.counts()["superseded reruns"] == 4
    assert status_counts(sweep) == Counter(ok=4)


@pytest.mark.parametrize("state", ["skipped", "diverged", "failed"])
def test_one_identitys_records_of_one_state_count_once(state, tmp_path):
    sweep = tmp_path / "sweep"
    write(sweep, "s0", record(0, state))
    write(sweep, "s0_rerun1", record(0, state, reason="another reason", error="other"))
    report = BenchmarkReport.from_records([record(1)] + [record(0, state)] * 2)
    assert len(report.failed) + len(report.skipped) == 1
    assert report.provenance["collapsed_duplicates"] == 1
    acc = collect_run_dirs([sweep])
    listed = acc.skipped + acc.failed
    assert len(listed) == 1 and listed[0]["path"].endswith(f"s0{'/'}{RECORD_NAME}")
    counts = acc.counts()
    assert counts[state] == 1 and counts["collapsed duplicates"] == 1
    assert status_counts(sweep) == Counter({state: 1})


def test_a_failed_rerun_beside_a_skipped_record_is_the_skipped_run(tmp_path):
    sweep = tmp_path / "sweep"
    write(sweep, "s0", record(0, "failed"))
    write(sweep, "s0_rerun1", record(0, "skipped"))
    with pytest.warns(UserWarning, match="1 failed record beside a skipped record"):
        acc = collect_run_dirs([sweep])
    assert [e["reason"] for e in acc.skipped] == ["skipped for a reason"] and acc.failed == []
    assert status_counts(sweep) == Counter(skipped=1)


def test_analyze_counts_a_sweep_as_status_does(tmp_path):
    sweep = tmp_path / "sweep"
    write(sweep, "a", record(0))
    write(sweep, "a_rerun1", record(0, "failed"))
    write(sweep, "a_rerun2", record(0))  # identical: collapsed
    write(sweep, "b", record(1, "skipped"))
    write(sweep, "b_rerun1", record(1, "skipped"))
    write(sweep, "c", record(2, "diverged"))
    write(sweep, "c_rerun1", record(2, "failed"))
    write(sweep, "d", record(3, "failed"))
    acc = analyze_counts(sweep)
    status = status_counts(sweep)
    assert {s: acc[s] for s in status} == status == Counter(ok=1, skipped=1, diverged=1, failed=1)


def test_records_without_an_identity_are_each_listed(recwarn):
    old = {k: v for k, v in record(0, "failed").items() if k != "schema_version"}
    old["schema_version"] = 1  # config stored as composed: no identity
    acc = collect_records([record(0), old, old])
    assert len(acc.failed) == 2 and acc.n_collapsed == 0
    assert not [w for w in recwarn if "not counted" in str(w.message)]


def test_ok_duplicates_still_collapse_or_conflict():
    acc = collect_records([record(0), record(0), record(0, accuracy=0.9)])
    assert acc.n_collapsed == 1 and [e["status"] for e in acc.failed] == ["conflicting"]


def test_the_analyze_command_counts_a_skipped_rerun_once(tmp_path):
    import subprocess

    sweep = tmp_path / "sweep"
    write(sweep, "s0", record(0))
    write(sweep, "s1", record(1, accuracy=0.7))
    write(sweep, "s1_rerun1", record(1, "failed"))
    done = subprocess.run(
        [sys.executable, str(ROOT / "analyze.py"), str(sweep), "--out", str(tmp_path / "r")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "runs: 2 ok, 0 failed" in done.stderr
    assert "1 reruns not counted" in done.stderr
    assert "warning: not counted as runs" in done.stderr and "s1_rerun1" in done.stderr
    report = (tmp_path / "r" / "report.md").read_text()
    assert "### Reruns not counted" in report
    assert "s1_rerun1" in report and "failed rerun beside the ok record" in report
    stored = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [e["status"] for e in stored["provenance"]["superseded_reruns"]] == ["failed"]


# ------------------------------------------------------------------ conflicts
def test_a_conflict_names_the_first_metric_that_differs():
    first = record(0, metrics={"test": {"accuracy": 0.5}, "val": {"accuracy": 0.6}})
    second = record(0, metrics={"test": {"accuracy": 0.5}, "val": {"accuracy": 0.7}})
    (conflict,) = collect_records([first, second]).failed
    assert "val accuracy 0.7 vs 0.6" in conflict["error"]
    third = record(0, metrics={"test": {"accuracy": 0.5, "f1": 0.2}, "val": {"accuracy": 0.6}})
    (conflict,) = collect_records([first, third]).failed
    assert "test f1 0.2 vs missing" in conflict["error"]


def test_a_conflict_in_the_primary_metric_names_it():
    (conflict,) = collect_records([record(0, accuracy=0.5), record(0, accuracy=0.9)]).failed
    assert "test accuracy 0.9 vs 0.5" in conflict["error"]


# ------------------------------------------------------------------ reproduction docs
def test_reproduction_records_count_a_rerun_once(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from reproduce_common import require_records, sweep_records

    def run(seed, accuracy=0.5):
        return record(seed, accuracy=accuracy, identity=f"{seed:064d}")

    sweep = tmp_path / "sweep"
    write(sweep, "s0_rerun1", run(0, 0.6))
    write(sweep, "s0_rerun10", run(0, 0.8))
    write(sweep, "s0_rerun2", run(0, 0.7))
    write(sweep, "s1", run(1))
    write(sweep, "s1_rerun1", run(1, 0.9))
    old = {**record(2), "schema_version": 1}
    write(sweep, "s2", old)
    write(sweep, "s2_copy", old)  # no identity: each kept, as analyze keeps them
    found = sweep_records([sweep])
    assert sorted((r["seed"], r["metrics"]["test"]["accuracy"]) for r in found) == [
        (0, 0.6),  # _rerun1 first: the original folder is gone (say, not restored)
        (1, 0.5),
        (2, 0.5),
        (2, 0.5),
    ]
    assert len(require_records([sweep, sweep])) == 4  # one sweep named twice: read once
    write(sweep, "s0", run(0, 0.5))
    assert {r["metrics"]["test"]["accuracy"] for r in sweep_records([sweep])} == {0.5}


# ------------------------------------------------------------------ the rerun folder
def test_a_rerun_after_another_writer_took_the_next_folder_goes_to_the_one_after(
    make_cfg, tmp_path, monkeypatch
):
    """While this rerun trains in ``<dir>_rerun1``, another rerun of the same run finishes
    there: this one then writes ``<dir>_rerun2``, not ``<dir>_rerun1_rerun1``."""
    from graphnetz.training import run as run_module

    run_dir, other = tmp_path / "karate_gcn", tmp_path / "elsewhere"
    run_experiment(make_cfg(*TINY), run_dir)
    run_experiment(make_cfg(*TINY), other)  # what the other rerun writes
    train = run_module.train_and_evaluate

    def another_rerun_finishes_first(*args, **kwargs):
        outcome = train(*args, **kwargs)
        assert (tmp_path / "karate_gcn_rerun1").is_dir()  # where this rerun trains
        (tmp_path / "karate_gcn_rerun1" / RECORD_NAME).write_bytes(
            (other / RECORD_NAME).read_bytes()
        )
        return outcome

    monkeypatch.setattr(run_module, "train_and_evaluate", another_rerun_finishes_first)
    mine = run_experiment(make_cfg(*TINY, "checkpoint_every_s=0"), run_dir)
    assert mine.status == "ok" and mine.run_dir == str(tmp_path / "karate_gcn_rerun2")
    assert RunRecord.read(tmp_path / "karate_gcn_rerun2" / RECORD_NAME).run_dir == mine.run_dir
    assert not (tmp_path / "karate_gcn_rerun1_rerun1").exists()
    assert not list(tmp_path.rglob("checkpoint.ckpt"))  # its own, in _rerun1, discarded


def test_a_rerun_is_announced_once(make_cfg, tmp_path, caplog):
    run_dir = tmp_path / "karate_gcn"
    run_experiment(make_cfg(*TINY), run_dir)
    with caplog.at_level(logging.WARNING, logger="graphnetz"):
        run_experiment(make_cfg(*TINY), run_dir)
    assert len(_announced(caplog)) == 1


def _announced(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "rerun without resume" in r.getMessage()]


def test_a_stacked_rerun_is_announced_once_per_seed(make_cfg, tmp_path, caplog, monkeypatch):
    """The sweep's unit asks ahead where each seed trains, then each job runs: the rerun
    folder is announced by the job alone."""
    from graphnetz.sweep import stacking

    dirs = {seed: tmp_path / f"karate_gcn_s{seed}" for seed in (0, 1)}
    configs = {seed: make_cfg(*TINY, f"seed={seed}") for seed in dirs}
    for seed, run_dir in dirs.items():
        run_experiment(configs[seed], run_dir)
    jobs = {seed: (seed, [f"seed={seed}"]) for seed in dirs}
    where = {id(configs[seed]): (tmp_path, dirs[seed]) for seed in dirs}
    monkeypatch.setattr(stacking, "_sweep_and_run_dir", lambda cfg: where[id(cfg)])
    with caplog.at_level(logging.INFO, logger="graphnetz"):
        records = stacking.run_unit(
            list(jobs.values()),
            lambda idx, overrides: configs[idx],
            lambda idx, overrides, cfg: run_experiment(cfg, dirs[idx]),
        )
    assert "seeds 0,1 trained stacked" in caplog.text
    assert [r.run_dir for _, r in records] == [f"{dirs[s]}_rerun1" for s in dirs]
    assert len(_announced(caplog)) == 2


def test_run_benchmark_announces_a_stacked_rerun_once_per_seed(tmp_path, data_dir, caplog):
    from graphnetz import iter_benchmark_tasks, run_benchmark

    karate = [t for t in iter_benchmark_tasks("social") if t.key == "karate/node_cls"]
    common = {"trainer.max_epochs": 2, "num_threads": 1, "paths.data_dir": str(data_dir)}
    for _ in range(2):
        run_benchmark(
            models=["gcn"], seeds=range(2), tasks=karate, out_dir=tmp_path, progress=False, **common
        )
    assert len(list(tmp_path.rglob("seed_*_rerun1/result.json"))) == 2
    assert len(_announced(caplog)) == 2
