"""Torch threads per job: one when several jobs share the machine.

With ``hydra/launcher=pool`` (the default), ``hydra/launcher=joblib`` or submitit's local
launchers running several jobs of a multirun at once, each job would otherwise start as many threads as the machine has cores;
the oversubscribed jobs then run slower than the same runs one after another.
``num_threads`` set explicitly always wins.
"""

from __future__ import annotations

from typing import Any

from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from graphnetz.sweep.pool import pool_workers


def parallel_jobs(config: DictConfig) -> int:
    """How many jobs the launcher runs at once on this machine: the pool's or joblib's
    workers; every job of a batch for submitit's local launchers (counted as 2: "several");
    1 for the others (basic: one after another; Slurm: each job on its own allocation)."""
    target = str(OmegaConf.select(config, "hydra.launcher._target_", default=""))
    n_jobs: Any = OmegaConf.select(config, "hydra.launcher.n_jobs", default=1)
    if target.endswith("PoolLauncher"):
        return pool_workers(n_jobs)
    if target.endswith("LocalLauncher"):  # submitit_local(_resuming): a process per job
        return 2
    if "joblib" not in target.lower():
        return 1
    if n_jobs is None or int(n_jobs) == 1:
        return 1
    return int(n_jobs)  # -1 (all cores) and other negatives count as "several"


def default_threads(config: DictConfig) -> int | None:
    """The torch thread count to set before a job whose ``num_threads`` is null: 1 when
    the job is one of a multirun's parallel jobs, else None (leave torch's default; a
    single run has the machine to itself, whatever launcher the config names). A job with
    ``num_threads`` set gets None: the run sets its own count (training/pipeline.py)."""
    if config.get("num_threads") is not None:
        return None
    if OmegaConf.select(config, "hydra.mode", default=None) != RunMode.MULTIRUN:
        return None
    return 1 if parallel_jobs(config) != 1 else None
