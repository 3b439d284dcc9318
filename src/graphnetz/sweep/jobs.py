"""How many jobs a ``-m`` command launches, computed as Hydra's basic sweeper does."""

from __future__ import annotations

from typing import Any

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf


def sweep_overrides(config: DictConfig) -> list[str]:
    """The command line's overrides, after the sweeper's own ``params`` (as Hydra's basic
    sweeper orders them: the command line wins)."""
    task = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    params: Any = OmegaConf.select(config, "hydra.sweeper.params", default=None) or {}
    return [f"{key}={value}" for key, value in dict(params).items()] + task


def job_count(config: DictConfig, config_loader: Any = None) -> int | None:
    """The number of jobs of the basic sweeper for ``config`` (the multirun config);
    None when another sweeper decides the jobs as it goes. ``config_loader`` (Hydra's,
    ``GlobalHydra.instance().config_loader()``) is needed to expand ``glob(...)`` over a
    config group's options."""
    target = str(OmegaConf.select(config, "hydra.sweeper._target_", default=""))
    if not target.endswith("BasicSweeper"):
        return None
    parsed = OverridesParser.create(config_loader).parse_overrides(sweep_overrides(config))
    return sum(len(batch) for batch in BasicSweeper.split_arguments(parsed, None))
