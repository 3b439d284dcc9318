"""``hydra/launcher=pool`` (``conf/hydra/launcher/pool.yaml``), the default launcher: the
sweep's jobs on worker processes forked once per sweep (:mod:`graphnetz.sweep.pool`);
with one worker, Hydra's basic launcher (every job in this process)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_launcher import BasicLauncher
from hydra.core.utils import JobReturn, configure_log, setup_globals

from graphnetz.sweep.pool import launch_pool, pool_workers


class PoolLauncher(BasicLauncher):
    def __init__(self, n_jobs: Any = "auto") -> None:
        super().__init__()
        self.workers = pool_workers(n_jobs)

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        if self.workers == 1 or len(job_overrides) == 1:
            return super().launch(job_overrides, initial_job_idx)
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
