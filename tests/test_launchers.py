"""Real ``train.py -m`` sweeps through the shipped launchers, each ending with
``analyze.py``; a job cut off mid-run is resumed to the result of an uninterrupted run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from graphnetz.config_dir import CONF_DIR
from graphnetz.sweep.pool import MAX_AUTO_WORKERS, pool_workers
from graphnetz.sweep.requeue import RESUME_OVERRIDE, with_resume
from graphnetz.training.run import run_experiment
from hydra_plugins.graphnetz_launchers.resuming_submitit import ResumingSlurmLauncher

REPO = Path(__file__).resolve().parents[1]
HOOK = Path(__file__).resolve().parent / "interrupt_hook"
EPOCHS, CUT_AT = 6, 2  # the seed-1 run is cut off after its epoch 2 (0-based) of 6
SWEEP = [
    "model=gcn",
    "seed=0,1",
    "dataset=karate",
    f"trainer.max_epochs={EPOCHS}",
    "checkpoint_every_s=0",  # a checkpoint every epoch
    "num_threads=1",  # bit-identity holds for equal thread counts
    "hydra.callbacks.sweep.progress_every_s=0",
]


def sweep(sweep_dir: Path, data_dir: Path, *overrides: str, interrupt: str | None = None):
    env = {k: v for k, v in os.environ.items() if k != "GRAPHNETZ_TEST_INTERRUPT"}
    env["PYTHONPATH"] = os.pathsep.join([str(HOOK), str(REPO / "src"), env.get("PYTHONPATH", "")])
    if interrupt:
        env["GRAPHNETZ_TEST_INTERRUPT"] = interrupt
    args = [*SWEEP, f"hydra.sweep.dir={sweep_dir}", f"paths.data_dir={data_dir}", *overrides]
    return subprocess.run(
        [sys.executable, "train.py", "-m", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def results(sweep_dir: Path) -> dict[int, dict]:
    found = {}
    for path in sweep_dir.glob("*/result.json"):
        record = json.loads(path.read_text())
        found[record["seed"]] = record
    return found


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The two runs trained in one go, in this process: what a resumed run must give."""
    out = tmp_path_factory.mktemp("reference")
    records = {}
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for seed in (0, 1):
            overrides = [o for o in SWEEP if not o.startswith(("hydra.", "seed="))]
            cfg = compose("config", overrides=[*overrides, f"seed={seed}", f"paths.data_dir={out}"])
            records[seed] = run_experiment(cfg, out / f"s{seed}").to_dict()
    return records


def assert_same_results(found: dict[int, dict], expected: dict[int, dict]) -> None:
    assert sorted(found) == [0, 1]
    for seed, record in found.items():
        assert record["status"] == "ok", record.get("reason")
        assert record["metrics"] == expected[seed]["metrics"]
        assert record["history"] == expected[seed]["history"]


def analyze(sweep_dir: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "analyze.py", str(sweep_dir)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return (sweep_dir / "report" / "report.md").read_text()


@pytest.mark.slow  # three sweep processes on a small machine
def test_joblib_sweep_killed_job_resumes_to_the_same_result(tmp_path, data_dir, uninterrupted):
    out = tmp_path / "sweep"
    launcher = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    killed = sweep(out, data_dir, *launcher, interrupt=f"{CUT_AT}:KILL:1")
    assert killed.returncode != 0  # the worker died: joblib ends the sweep
    cut = next(p.parent for p in out.glob("*/checkpoint.ckpt"))
    assert not (cut / "result.json").exists()

    resumed = sweep(out, data_dir, *launcher, "resume=true")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming after epoch {CUT_AT + 1}" in resumed.stdout + resumed.stderr
    assert "sweep summary: ok 2, failed 0, diverged 0, skipped 0" in resumed.stderr
    found = results(out)
    assert found[1]["resumed"]["from_epoch"] == CUT_AT + 1
    assert_same_results(found, uninterrupted)
    assert "| karate/node_cls | accuracy ↑ | gcn | 2 |" in analyze(out)


POOL = ["hydra/launcher=pool", "hydra.launcher.n_jobs=2"]


def test_the_pool_launcher_gives_every_run_the_in_process_result(tmp_path, data_dir, uninterrupted):
    proc = sweep(tmp_path / "sweep", data_dir, *POOL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "sweep summary: ok 2, failed 0, diverged 0, skipped 0" in proc.stderr
    assert_same_results(results(tmp_path / "sweep"), uninterrupted)


def test_a_killed_pool_worker_costs_only_its_job(tmp_path, data_dir, uninterrupted):
    """The job whose worker died runs again alone; with resume=true it continues from
    its checkpoint (the hook kills only the first attempt) to the uninterrupted result;
    without, it dies again and is the one failed job of a sweep that went on."""
    resumed = sweep(tmp_path / "a", data_dir, *POOL, "resume=true", interrupt=f"{CUT_AT}:KILL:1")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    found = results(tmp_path / "a")
    assert found[1]["resumed"]["from_epoch"] == CUT_AT + 1
    assert_same_results(found, uninterrupted)

    again = sweep(tmp_path / "b", data_dir, *POOL, interrupt=f"{CUT_AT}:KILL:1")
    assert again.returncode == 0, again.stderr[-3000:]  # one run succeeded
    assert "sweep summary: ok 1, failed 1, diverged 0, skipped 0" in again.stderr
    failed = results(tmp_path / "b")[1]
    assert failed["status"] == "failed"
    assert "its worker process died twice (job #1)" in failed["reason"]


def test_after_a_worker_dies_the_jobs_it_had_not_started_share_a_fresh_pool(
    tmp_path, data_dir, uninterrupted
):
    """Eight jobs on two workers, seed 1 killed once (it resumes from its checkpoint):
    the jobs that were in a worker run again alone, those that had not started on a
    fresh pool of both workers, and every run ends as if never killed."""
    out = tmp_path / "sweep"
    proc = sweep(
        out,
        data_dir,
        *POOL,
        "seed=range(8)",
        "stack_seeds=false",
        "resume=true",
        interrupt=f"{CUT_AT}:KILL:1",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "a worker died: " in proc.stdout + proc.stderr
    found = results(out)
    assert sorted(found) == list(range(8))
    assert all(r["status"] == "ok" for r in found.values())
    assert found[1]["resumed"]["from_epoch"] == CUT_AT + 1
    assert_same_results({s: found[s] for s in (0, 1)}, uninterrupted)


def test_pool_sizes_are_checked():
    assert pool_workers(3) == 3
    assert 1 <= pool_workers("auto") <= MAX_AUTO_WORKERS
    for bad in (0, -2, "many", True):
        with pytest.raises(ValueError, match=r"n_jobs=.*choose 'auto'"):
            pool_workers(bad)


@pytest.mark.slow  # three sweep processes on a small machine
def test_submitit_local_sweep_killed_job_resumes_to_the_same_result(
    tmp_path, data_dir, uninterrupted
):
    out = tmp_path / "sweep"
    killed = sweep(out, data_dir, "hydra/launcher=submitit_local", interrupt=f"{CUT_AT}:KILL:1")
    assert killed.returncode != 0  # submitit reports the killed job
    assert not (next(p.parent for p in out.glob("*/checkpoint.ckpt")) / "result.json").exists()

    resumed = sweep(out, data_dir, "hydra/launcher=submitit_local", "resume=true")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_same_results(results(out), uninterrupted)
    assert "| karate/node_cls | accuracy ↑ | gcn | 2 |" in analyze(out)


@pytest.mark.slow  # three sweep processes on a small machine
def test_a_preempted_submitit_job_is_requeued_and_resumes(tmp_path, data_dir, uninterrupted):
    """USR2 is what Slurm sends before preemption or the time limit: the job checkpoints,
    is requeued with resume=true and continues from the run's own checkpoint."""
    out = tmp_path / "sweep"
    proc = sweep(
        out, data_dir, "hydra/launcher=submitit_local_resuming", interrupt=f"{CUT_AT}:USR2:1"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = results(out)
    assert found[1]["resumed"]["from_epoch"] == CUT_AT + 1
    assert found[0]["resumed"] is None
    assert_same_results(found, uninterrupted)


def test_requeue_resumes_whatever_the_sweep_said():
    assert with_resume(["model=gcn", "resume=false", "seed=1"]) == [
        "model=gcn",
        "seed=1",
        RESUME_OVERRIDE,
    ]
    assert with_resume(["+resume=false"]) == [RESUME_OVERRIDE]
    launcher = ResumingSlurmLauncher()
    delayed = launcher.checkpoint(["seed=3"], "hydra.sweep.dir", 4, "job_id_for_4", {})
    assert delayed.function is launcher
    assert delayed.args == (["seed=3", RESUME_OVERRIDE], "hydra.sweep.dir", 4, "job_id_for_4", {})


def test_the_slurm_preset_reads_the_machine_settings(tmp_path):
    local = tmp_path / "local"
    local.mkdir()
    (local / "slurm.yaml").write_text(
        "partition: long\ntimeout_min: 90\nmem_gb: 12\ncpus_per_task: 3\n"
        "gpus_per_node: 2\narray_parallelism: 5\n"
    )
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        bare = compose("config", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
        mine = compose(
            "config",
            overrides=["hydra/launcher=slurm", f"hydra.searchpath=[file://{tmp_path}]"],
            return_hydra_config=True,
        )
    assert (
        bare.hydra.launcher._target_ == ResumingSlurmLauncher.__module__ + ".ResumingSlurmLauncher"
    )
    launcher = mine.hydra.launcher
    got = {k: launcher[k] for k in ("partition", "timeout_min", "mem_gb", "cpus_per_task")}
    assert got == {"partition": "long", "timeout_min": 90, "mem_gb": 12, "cpus_per_task": 3}
    assert (launcher.gpus_per_node, launcher.array_parallelism) == (2, 5)
    assert "local" not in mine or not mine.get("local")  # launcher settings stay out of runs


def test_a_cell_whose_runs_train_alone_reaches_the_workers_job_by_job(monkeypatch, tmp_path):
    """A unit that cannot stack is split before the workers take it: otherwise one
    worker ran its first job and only then handed back the rest (a sweep of one
    H2GCN cell ran its seeds one after another beside an idle worker)."""
    from concurrent.futures import Future

    from graphnetz.sweep import pool

    jobs = [(0, ["model=h2gcn", "seed=0"]), (1, ["model=h2gcn", "seed=1"])]
    jobs += [(2, ["model=gcn", "seed=0"]), (3, ["model=gcn", "seed=1"])]
    submitted = []

    class InlinePool:
        def submit(self, fn, unit):
            submitted.append([idx for idx, _ in unit])
            future = Future()
            future.set_result([(idx, f"ran {idx}") for idx, _ in unit])
            return future

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    monkeypatch.setattr(pool, "_fork_pool", lambda workers: InlinePool())
    monkeypatch.setattr(pool, "_trains_alone", lambda job: "model=h2gcn" in job[1])
    results: dict = {}
    (tmp_path / "started").mkdir()
    pool._run_batch(jobs, 2, results, tmp_path / "started")
    assert submitted == [[0], [2, 3], [1]]  # lone seeds after the first queue behind
    assert results == {i: f"ran {i}" for i in range(4)}


def test_lone_units_split_in_sweep_order():
    from graphnetz.sweep.pool import split_lone_units

    units = [[(0, "a"), (1, "a")], [(2, "b"), (3, "b")], [(4, "a")]]
    split = split_lone_units(units, trains_alone=lambda job: job[1] == "a")
    assert split == [[(0, "a")], [(2, "b"), (3, "b")], [(4, "a")], [(1, "a")]]


def test_a_unit_whose_stack_check_fails_is_left_to_its_worker(monkeypatch):
    """The launching process asks the stack refusal only to split units: an error there
    (a loader that cannot be imported) is the jobs' own, met and recorded in a worker."""
    from omegaconf import OmegaConf

    from graphnetz.sweep import pool

    def refuse(spec):
        raise ImportError("no module named graphnetz.data.nope")

    monkeypatch.setattr(pool, "_job_config", lambda idx, overrides: OmegaConf.create({}))
    monkeypatch.setattr(pool, "resolve_run", lambda cfg: object())
    monkeypatch.setattr(pool, "stack_refusal", refuse)
    assert pool._trains_alone((0, ["model=gcn"])) is False
    assert pool.split_lone_units([[(0, "a"), (1, "a")]]) == [[(0, "a"), (1, "a")]]


def test_a_stack_check_that_fails_in_a_worker_leaves_each_run_to_meet_it(monkeypatch):
    """In a worker the same error makes the unit's runs train alone, each recording its
    failure (it used to end the unit with the exception: no records, and Hydra's
    traceback at the sweep's end)."""
    from types import SimpleNamespace

    from omegaconf import OmegaConf

    from graphnetz.sweep import stacking

    def refuse(spec):
        raise ImportError("no module named graphnetz.data.nope")

    spec = SimpleNamespace(label="karate/node_cls gcn")
    monkeypatch.setattr(stacking, "resolve_run", lambda cfg: spec)
    monkeypatch.setattr(stacking, "stack_refusal", refuse)
    unit = [(0, ["seed=0"]), (1, ["seed=1"])]
    configs = {0: OmegaConf.create({"seed": 0}), 1: OmegaConf.create({"seed": 1})}
    assert stacking._train_stack(unit, configs) is False
