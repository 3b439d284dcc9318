"""A sweep's seeds of one cell as one unit of work, trained stacked where they can be.

The local launchers (``hydra/launcher=pool``, in-process and forked) group the jobs whose
overrides differ only in ``seed=`` into units (:func:`stack_units`). A unit's process
first trains the runs that stack (:func:`graphnetz.training.stacked.train_stacked`: the
same results as alone, bit for bit), then runs every job of the unit through Hydra as
usual: each job writes its own run directory and record, taking its stacked result
instead of training. Jobs that do not stack (another task type or model, a finished
record under ``resume=true``, a checkpoint to resume from, ``stack_seeds=false``) simply
train in their turn, as they would without the unit.

Units are at most :data:`graphnetz.training.stacked.MAX_STACK` jobs, and a sweep with
fewer cells than workers splits its largest units so that every worker has work. A unit
whose seeds cannot stack is split into single jobs before the forked pool hands it out
(:func:`graphnetz.sweep.pool.split_lone_units`); one that finds it out only here (too
large to gain) hands its jobs after the first back (``defer``), which the pool queues one
by one, so a long cell of runs alone does not keep one worker busy while the others wait.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from graphnetz.training.checkpoint import CHECKPOINT_NAME
from graphnetz.training.resolve import resolve_run
from graphnetz.training.run import completed_record, own_run_dir
from graphnetz.training.stacked import MAX_STACK, discard_waiting, stack_refusal, train_ahead

log = logging.getLogger(__name__)
Job = tuple[int, list[str]]
#: Units smaller than this are not split further to feed idle workers.
MIN_SPLIT = 4


def _cell(overrides: Sequence[str]) -> tuple[str, ...]:
    """The job's overrides without its seed: equal for the seeds of one cell."""
    return tuple(o for o in overrides if o.lstrip("+").partition("=")[0] != "seed")


def stack_units(jobs: Sequence[Job], workers: int) -> list[list[Job]]:
    """The jobs grouped by cell (in sweep order), at most ``MAX_STACK`` a unit, the
    largest units halved while there are fewer units than ``workers``."""
    cells: dict[tuple[str, ...], list[Job]] = {}
    for job in jobs:
        cells.setdefault(_cell(job[1]), []).append(job)
    units = [
        group[i : i + MAX_STACK]
        for group in cells.values()
        for i in range(0, len(group), MAX_STACK)
    ]
    while len(units) < workers:
        largest = max(units, key=len, default=[])
        if len(largest) < MIN_SPLIT:
            break
        half = (len(largest) + 1) // 2
        position = units.index(largest)
        units[position : position + 1] = [largest[:half], largest[half:]]
    return sorted(units, key=lambda unit: unit[0][0])


class Deferred:
    """A unit's result for a job it handed back to be run on its own (``defer``)."""


def run_unit(
    unit: Sequence[Job],
    job_config: Callable[[int, Sequence[str]], DictConfig],
    run_one: Callable[[int, Sequence[str], DictConfig | None], Any],
    catch: bool = False,
    defer: bool = False,
) -> list[tuple[int, Any]]:
    """Train the unit's stackable runs together, then run each job in order
    (``run_one(idx, overrides, config)``, with the job's config composed once here, or
    None where composing it failed: the job then meets the error itself). With
    ``catch``, a job that raises (a config Hydra refuses) gives its exception as its
    result and the unit's other jobs still run. With ``defer``, a unit whose seeds did
    not train stacked runs its first job only and gives :class:`Deferred` for the rest."""
    configs: dict[int, DictConfig | None] = {}
    stacked = False
    if len(unit) > 1:
        for idx, overrides in unit:
            try:
                configs[idx] = job_config(idx, overrides)
            except Exception:
                configs[idx] = None
        stacked = _train_stack(unit, configs)
    results: list[tuple[int, Any]] = []
    if defer and not stacked and len(unit) > 1:
        results = [(idx, Deferred()) for idx, _ in unit[1:]]
        unit = unit[:1]
    try:
        for idx, overrides in unit:
            try:
                results.append((idx, run_one(idx, overrides, configs.get(idx))))
            except Exception as err:
                if not catch:
                    raise
                results.append((idx, err))
    finally:
        discard_waiting()  # a job that did not take its result leaves nothing behind
    return results


def _train_stack(unit: Sequence[Job], configs: dict[int, DictConfig | None]) -> bool:
    """Whether the unit's runs (those still to run) trained stacked."""
    specs, run_dirs = [], []
    for idx, _ in unit:
        cfg = configs[idx]
        if cfg is None:
            continue  # its own job will record why it cannot run
        try:
            spec = resolve_run(OmegaConf.masked_copy(cfg, [k for k in cfg if k != "hydra"]))
        except Exception:
            continue
        try:
            refusal = stack_refusal(spec)
        except Exception as err:  # noqa: BLE001 - e.g. a loader that cannot be imported
            refusal = f"its stack check failed ({type(err).__name__}): each run meets it alone"
        if refusal is not None:
            log.debug("%s trains alone: %s", spec.label, refusal)
            return False  # the unit's runs share their config: none of them stacks
        dirs = _sweep_and_run_dir(cfg)
        if dirs is None or (spec.config.get("resume") and _done_or_resumable(spec, *dirs)):
            continue  # it runs alone, in its turn
        resuming = bool(spec.config.get("resume"))
        # where the run will train; its own job says so when it runs (run_experiment)
        run_dir = own_run_dir(spec.identity, dirs[1], resuming, quiet=True)
        specs.append(spec)
        run_dirs.append(run_dir)
    return train_ahead(specs, run_dirs)


def _sweep_and_run_dir(cfg: DictConfig) -> tuple[Path, Path] | None:
    """The sweep's folder and the job's run directory, as Hydra's job setup names them
    (None: they cannot be told before the job starts)."""
    try:
        sweep_dir = Path(str(OmegaConf.select(cfg, "hydra.sweep.dir")))
        return sweep_dir, sweep_dir / str(OmegaConf.select(cfg, "hydra.sweep.subdir"))
    except Exception:
        return None


def _done_or_resumable(spec, sweep_dir: Path, run_dir: Path) -> bool:
    """A finished record of this identity in the sweep, or a checkpoint in its run dir."""
    if (run_dir / CHECKPOINT_NAME).exists():
        return True
    return completed_record(spec, run_dir, sweep_dir) is not None


__all__ = ["Deferred", "run_unit", "stack_units"]
