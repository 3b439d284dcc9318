"""``hydra/sweeper=graphnetz`` (``conf/hydra/sweeper/graphnetz.yaml``), the default sweeper: Hydra's basic sweeper (the same jobs,
in the same order, with the same ``params``) whose jobs' configs are composed once per
config-group choice (:mod:`graphnetz.sweep.composition`), and composed once per job: the
configs that check a batch are the ones its launch in this process uses.

Unlike Hydra's, it writes the sweep's ``multirun.yaml`` (and makes its folder) only once
the first batch (every job, unless ``max_batch_size`` is set) has composed: a sweep
relaunched with a mistyped choice (``model=gcn,mlpp``) keeps the ``multirun.yaml`` of its
last good launch, which ``python -m graphnetz status`` reads, and a fresh one leaves no
folder behind."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from graphnetz.sweep.composition import CachedComposition, check_distinct_run

log = logging.getLogger(__name__)


class GraphnetzBasicSweeper(BasicSweeper):
    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        cached = HydraContext(
            config_loader=CachedComposition(hydra_context.config_loader),
            callbacks=hydra_context.callbacks,
        )
        super().setup(hydra_context=cached, task_function=task_function, config=config)

    def sweep(self, arguments: list[str]) -> Any:
        """Hydra's ``BasicSweeper.sweep`` (the same batches, launched alike), but
        ``multirun.yaml`` is saved after the first batch is checked, not before."""
        assert self.config is not None and self.launcher is not None
        assert self.hydra_context is not None
        params_conf = self._parse_config()
        params_conf.extend(arguments)
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        overrides = parser.parse_overrides(params_conf)
        self.overrides = self.split_arguments(overrides, self.max_batch_size)
        returns = []
        initial_job_idx = 0
        while not self.is_done():
            batch = self.get_job_batch()
            tic = time.perf_counter()
            self.validate_batch_is_legal(batch)
            elapsed = time.perf_counter() - tic
            log.debug(f"Validated configs of {len(batch)} jobs in {elapsed:0.2f} seconds")
            if initial_job_idx == 0 and batch:  # it composes: now the sweep's last launch
                sweep_dir = Path(self.config.hydra.sweep.dir)
                sweep_dir.mkdir(parents=True, exist_ok=True)
                OmegaConf.save(self.config, sweep_dir / "multirun.yaml")
            results = self.launcher.launch(batch, initial_job_idx=initial_job_idx)
            for r in results:
                _ = r.return_value  # raises where the job failed, as Hydra's does
            initial_job_idx += len(batch)
            returns.append(results)
        return returns

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Hydra's check that every job of the batch composes, keeping each config for
        the job's launch; and that no two jobs of the sweep are the same run."""
        seen = self.__dict__.setdefault("_run_dirs", {})
        for overrides in batch:
            config = self.hydra_context.config_loader.compose_ahead(self.config, list(overrides))
            check_distinct_run(seen, config, list(overrides))
