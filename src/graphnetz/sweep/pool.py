"""``hydra/launcher=pool``: a sweep's jobs on worker processes forked once per sweep.

Each worker is a fork of the launching process, made after it imported torch, Lightning
and PyG, composed the sweep's configs and paid the first-use costs of its loaders and
models (:mod:`graphnetz.sweep.prewarm`), so a worker pays none of that again (the
joblib launcher's workers each import everything and receive the pickled Hydra state
with every job). A worker keeps what it loaded (datasets are cached per process,
``graphnetz.data.loading``) for the jobs that follow. Jobs are handed out in sweep order
to whichever worker is free, a cell's seeds as one unit (trained stacked where they can
be, :mod:`graphnetz.sweep.stacking`); a cell whose seeds train alone is handed out job
by job (:func:`split_lone_units`), so that no worker works through a long cell while
another waits. Results come back in sweep order.

A job that fails is a failed run, as in every launcher. A worker that dies (killed,
out of memory, a crash in native code) takes only its job with it. The pool breaks,
and its jobs without a result are run again: those that had not started on a fresh
pool of all workers, those that were in a worker when it died each in a pool of its own
(with ``resume=true`` from their checkpoints), and one that kills its worker a second
time gets a ``failed`` run record saying so; the rest of the sweep runs on. Ctrl-C
stops the workers and the sweep.

Forking with a live thread is safe only if that thread holds no lock the child needs:
the sweep's progress thread (``graphnetz.sweep.callbacks``) prints under
:data:`FORK_LOCK`, which the fork takes first.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import tempfile
import threading
import warnings
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from hydra.core.utils import JobReturn, JobStatus, configure_log, filter_overrides, run_job
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

from graphnetz.sweep.prewarm import prewarm
from graphnetz.sweep.stacking import Deferred, run_unit, stack_units
from graphnetz.training.resolve import resolve_run
from graphnetz.training.stacked import stack_refusal

log = logging.getLogger(__name__)
#: Held by threads of the launching process while they write to a stream, and by the fork.
FORK_LOCK = threading.Lock()
MAX_AUTO_WORKERS = 8
#: Pools a sweep's jobs get before every job still without a result runs alone.
FULL_POOL_ATTEMPTS = 3
_sweep: dict[str, Any] = {}  # what the forked workers inherit: context, task, config


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool_workers(n_jobs: Any) -> int:
    """Workers for ``hydra.launcher.n_jobs``: ``auto`` = one per usable core (at most
    :data:`MAX_AUTO_WORKERS`), -1 = one per usable core, N >= 1 = N."""
    if n_jobs == "auto":
        return max(1, min(usable_cores(), MAX_AUTO_WORKERS))
    if n_jobs == -1:
        return usable_cores()
    if isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs >= 1:
        return n_jobs
    raise ValueError(
        f"hydra.launcher.n_jobs={n_jobs!r} is not valid; choose 'auto' (one worker per "
        "usable core, at most 8), -1 (one per usable core) or a number of workers >= 1"
    )


def _job_config(idx: int, overrides: Sequence[str]) -> DictConfig:
    sweep_config = _sweep["context"].config_loader.load_sweep_config(
        _sweep["config"], list(overrides)
    )
    with open_dict(sweep_config):
        sweep_config.hydra.job.id = idx
        sweep_config.hydra.job.num = idx
    return sweep_config


def _trains_alone(job: tuple[int, Sequence[str]]) -> bool:
    """Whether the job's runs cannot train stacked (the refusal a worker's unit would
    meet); False where that cannot be told here (the worker meets the error)."""
    idx, overrides = job
    try:
        cfg = _job_config(idx, overrides)
        spec = resolve_run(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]))
        return stack_refusal(spec) is not None
    except Exception:  # noqa: BLE001 - its jobs meet the error in a worker and record it
        return False


def split_lone_units(units: list[list], trains_alone=None) -> list[list]:
    """``units`` with each unit whose runs train alone split into one-job units: its first
    job keeps the unit's place, the others queue behind every unit, in sweep order.

    Decided before any worker takes them. A worker used to find it out itself, run the
    unit's first job and only then hand the others back, so a sweep of one such cell (3
    seeds of H2GCN) ran its seeds one after another while the other workers idled. The
    order is the one that hand-back gave: seeds of lone cells fill the sweep's tail,
    which keeps the workers busy to its end.
    """
    trains_alone = trains_alone or _trains_alone
    heads: list[list] = []
    tails: list[list] = []
    for unit in units:
        if len(unit) > 1 and trains_alone(unit[0]):
            heads.append(unit[:1])
            tails.extend([job] for job in unit[1:])
        else:
            heads.append(unit)
    return heads + tails


def _run(
    idx: int,
    overrides: Sequence[str],
    config: DictConfig | None = None,
    task_function: TaskFunction | None = None,
):
    """One job, in a worker (``config``: the job's, composed already; ``task_function``:
    instead of the sweep's task)."""
    return run_job(
        hydra_context=_sweep["context"],
        task_function=task_function or _sweep["task"],
        config=config if config is not None else _job_config(idx, overrides),
        job_dir_key="hydra.sweep.dir",
        job_subdir_key="hydra.sweep.subdir",
    )


def _run_unit(unit: Sequence[tuple[int, list[str]]]):
    """One unit of a sweep (a cell's seeds, trained stacked where they can be:
    :mod:`graphnetz.sweep.stacking`), in a worker. While it runs, a file per job in the
    batch's ``started`` folder says so: if the pool breaks, those jobs were in a worker
    (one of them killed it), the others had not started."""
    marks = [Path(_sweep["started"]) / str(idx) for idx, _ in unit]
    for mark in marks:
        mark.touch()
    try:
        return run_unit(unit, _job_config, _run, catch=True, defer=True)
    finally:
        for mark in marks:
            mark.unlink(missing_ok=True)


def _record_death(idx: int, overrides: Sequence[str]) -> JobReturn:
    """The job's failed run record, written in this process the way its worker would
    have written it (its run directory, its sweep event), so the sweep counts it."""
    from hydra.core.hydra_config import HydraConfig

    from graphnetz.training.run import record_failure

    died = RuntimeError(f"its worker process died twice (job #{idx}); see the sweep's log")

    def write_failed_record(cfg: DictConfig) -> None:
        record_failure(cfg, HydraConfig.get().runtime.output_dir, died)

    log.error("job #%d: %s; the sweep goes on", idx, died)
    try:
        return _run(idx, overrides, task_function=write_failed_record)
    finally:
        configure_log(_sweep["config"].hydra.hydra_logging, _sweep["config"].hydra.verbose)


def _release_inherited_lock() -> None:
    """In a new worker: the copy of :data:`FORK_LOCK` it inherited is held (by the fork)."""
    if FORK_LOCK.locked():
        FORK_LOCK.release()


def _fork_pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_release_inherited_lock,
    )


def _failed(idx: int, overrides: Sequence[str], err: BaseException) -> JobReturn:
    log.error("job #%d failed: %s: %s; the sweep goes on", idx, type(err).__name__, err)
    return JobReturn(overrides=list(overrides), status=JobStatus.FAILED, _return_value=err)


def launch_pool(
    hydra_context: HydraContext,
    task_function: TaskFunction,
    config: DictConfig,
    job_overrides: Sequence[Sequence[str]],
    initial_job_idx: int,
    workers: int,
) -> list[JobReturn]:
    """Run the jobs on ``workers`` forked workers; results in sweep order."""
    _sweep.update(context=hydra_context, task=task_function, config=config)
    jobs = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
    for idx, overrides in jobs:
        log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
    prewarm(jobs, _job_config)  # what every worker's first jobs would pay, paid once
    results: dict[int, JobReturn] = {}
    suspects, todo = [], jobs
    with tempfile.TemporaryDirectory(prefix="graphnetz-started-") as started:
        _sweep["started"] = started  # inherited by the workers forked below
        for attempt in range(FULL_POOL_ATTEMPTS):  # jobs a dead worker had not started
            if not todo:
                break
            running, waiting = _run_batch(todo, workers, results, Path(started))
            if waiting and (not running or attempt == FULL_POOL_ATTEMPTS - 1):
                running, waiting = running + waiting, []  # no way to tell which: each alone
            if running:
                log.warning(
                    "a worker died: %d job(s) that were in a worker run again each alone, "
                    "%d that had not started on a fresh pool",
                    len(running),
                    len(waiting),
                )
            suspects, todo = suspects + running, waiting
        for idx, overrides in suspects:  # each again, alone, to find which one kills
            lost = _run_batch([(idx, overrides)], 1, results, Path(started))
            if lost[0] or lost[1]:
                results[idx] = _record_death(idx, overrides)
    return [results[idx] for idx, _ in jobs]


def _run_batch(jobs, workers: int, results: dict[int, JobReturn], started: Path):
    """Run ``jobs`` on a fresh pool into ``results``, a cell's seeds as one unit; the
    jobs lost with a dead worker, as (those that had started, those that had not)."""
    for mark in started.iterdir():  # a killed worker's, from the batch before
        mark.unlink(missing_ok=True)
    units = split_lone_units(stack_units(jobs, workers))
    # a worker per job up to ``workers``, not per unit: the seeds of a cell that does not
    # stack arrive one by one (split above, or handed back by a unit that found it out)
    pool = _fork_pool(min(workers, len(jobs)))
    running, waiting = [], []

    def lose(unit) -> None:
        begun = any((started / str(idx)).exists() for idx, _ in unit)
        (running if begun else waiting).extend(unit)

    try:
        pending: dict[Future, list] = {}
        for n, unit in enumerate(units):
            if n == 0:
                with FORK_LOCK, warnings.catch_warnings():  # a forking pool forks all its
                    # workers at its first job; the lock is why the fork is safe here
                    warnings.filterwarnings("ignore", message=r".*multi-threaded.*fork\(\)")
                    pending[pool.submit(_run_unit, unit)] = unit
            else:
                pending[pool.submit(_run_unit, unit)] = unit
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                unit = pending.pop(future)
                try:
                    returned = dict(future.result())
                except BrokenProcessPool:
                    lose(unit)
                    continue
                except Exception as err:  # the unit's results could not come back
                    returned = {idx: err for idx, _ in unit}
                for idx, overrides in unit:
                    result = returned[idx]
                    if isinstance(result, Deferred):  # its unit did not stack: queue it alone
                        try:
                            pending[pool.submit(_run_unit, [(idx, overrides)])] = [(idx, overrides)]
                        except BrokenProcessPool:
                            waiting.append((idx, overrides))
                        continue
                    if isinstance(result, Exception):  # it could not start (Hydra refused it)
                        result = _failed(idx, overrides, result)
                    results[idx] = result
    except BaseException:  # Ctrl-C: stop the workers too
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return running, waiting
