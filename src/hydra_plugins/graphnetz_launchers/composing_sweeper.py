"""``hydra/sweeper=graphnetz`` (``conf/hydra/sweeper/graphnetz.yaml``), the default sweeper: Hydra's basic sweeper (the same jobs,
in the same order, with the same ``params``) whose jobs' configs are composed once per
config-group choice (:mod:`graphnetz.sweep.composition`)."""

from __future__ import annotations

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig

from graphnetz.sweep.composition import CachedComposition


class GraphnetzBasicSweeper(BasicSweeper):
    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        cached = HydraContext(
            config_loader=CachedComposition(hydra_context.config_loader),
            callbacks=hydra_context.callbacks,
        )
        super().setup(hydra_context=cached, task_function=task_function, config=config)
