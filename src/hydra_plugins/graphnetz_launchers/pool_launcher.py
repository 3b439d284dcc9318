"""``hydra/launcher=pool`` (``conf/hydra/launcher/pool.yaml``), the default launcher: the
sweep's jobs on worker processes forked once per sweep (:mod:`graphnetz.sweep.pool`);
with one worker, Hydra's basic launcher (every job in this process)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra.core.utils import JobReturn, configure_log, filter_overrides, run_job, setup_globals
from omegaconf import open_dict

from graphnetz.sweep.pool import launch_pool, pool_workers
from graphnetz.sweep.stacking import run_unit, stack_units

log = logging.getLogger(__name__)


class PoolLauncher(BasicLauncher):
    """Hydra's basic launcher in this process (one worker), else forked workers; either
    way a cell's seeds go together, trained stacked where they can be
    (:mod:`graphnetz.sweep.stacking`)."""

    def __init__(self, n_jobs: Any = "auto") -> None:
        super().__init__()
        self.workers = pool_workers(n_jobs)

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        if len(job_overrides) == 1:
            return super().launch(job_overrides, initial_job_idx)
        if self.workers == 1:
            return self._launch_here(job_overrides, initial_job_idx)
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        return launch_pool(
            self.hydra_context,
            self.task_function,
            self.config,
            job_overrides,
            initial_job_idx,
            self.workers,
        )

    def _job_config(self, idx: int, overrides: Sequence[str]):
        config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
        with open_dict(config):
            config.hydra.job.id = idx
            config.hydra.job.num = idx
        return config

    def _run_here(self, idx: int, overrides: Sequence[str], config=None) -> JobReturn:
        try:
            return run_job(
                hydra_context=self.hydra_context,
                task_function=self.task_function,
                config=config if config is not None else self._job_config(idx, overrides),
                job_dir_key="hydra.sweep.dir",
                job_subdir_key="hydra.sweep.subdir",
            )
        finally:
            configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)

    def _launch_here(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> list[JobReturn]:
        """Hydra's basic launcher (every job in this process, in sweep order), with a
        cell's seeds as one unit."""
        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        log.info(f"Launching {len(job_overrides)} jobs locally")
        jobs = [(initial_job_idx + i, list(o)) for i, o in enumerate(job_overrides)]
        for idx, overrides in jobs:
            log.info(f"\t#{idx} : {' '.join(filter_overrides(overrides))}")
        results: dict[int, JobReturn] = {}
        for unit in stack_units(jobs, 1):
            results.update(run_unit(unit, self._job_config, self._run_here))
        return [results[idx] for idx, _ in jobs]
