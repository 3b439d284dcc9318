"""``hydra/sweeper=graphnetz`` (``conf/hydra/sweeper/graphnetz.yaml``), the default sweeper: Hydra's basic sweeper (the same jobs,
in the same order, with the same ``params``) whose jobs' configs are composed once per
config-group choice (:mod:`graphnetz.sweep.composition`), and composed once per job: the
configs that check a batch are the ones its launch in this process uses."""

from __future__ import annotations

from collections.abc import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig

from graphnetz.sweep.composition import CachedComposition, check_distinct_run


class GraphnetzBasicSweeper(BasicSweeper):
    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        cached = HydraContext(
            config_loader=CachedComposition(hydra_context.config_loader),
            callbacks=hydra_context.callbacks,
        )
        super().setup(hydra_context=cached, task_function=task_function, config=config)

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        """Hydra's check that every job of the batch composes, keeping each config for
        the job's launch; and that no two jobs of the sweep are the same run."""
        seen = self.__dict__.setdefault("_run_dirs", {})
        for overrides in batch:
            config = self.hydra_context.config_loader.compose_ahead(self.config, list(overrides))
            check_distinct_run(seen, config, list(overrides))
