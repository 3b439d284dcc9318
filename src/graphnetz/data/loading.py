"""Load the dataset a run asks for, once per process (and per seed for seed-aware loaders).

A dataset config names its loader with ``_target_``. Loaders that accept a ``seed`` keyword
generate data (synthetic graphs) and are called with the run seed, so variance across
seeds includes resampling the data; all others are loaded once and reused across runs.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import get_method, instantiate
from omegaconf import DictConfig, OmegaConf

from graphnetz.data.mirror import resolve_mirror

_CACHE: dict[tuple, Any] = {}


def accepts_seed(loader_cfg: DictConfig | dict) -> bool:
    target = get_method(loader_cfg["_target_"])
    params = inspect.signature(target).parameters
    return "seed" in params


def load_dataset(
    loader_cfg: DictConfig | dict, data_dir: str | Path, mirror=None, seed: int | None = None
) -> Any:
    """Instantiate ``loader_cfg`` with ``root``/``mirror`` (+ ``seed`` if accepted), cached."""
    cfg = loader_cfg if isinstance(loader_cfg, DictConfig) else OmegaConf.create(loader_cfg)
    seeded = accepts_seed(cfg)
    mirror_path = resolve_mirror(mirror)
    key = (
        OmegaConf.to_yaml(cfg),
        str(Path(data_dir).resolve()),
        str(mirror_path),
        seed if seeded else None,
    )
    if key not in _CACHE:
        kwargs = {"root": str(data_dir), "mirror": mirror_path}
        if seeded:
            kwargs["seed"] = seed
        try:
            _CACHE[key] = instantiate(cfg, **kwargs)
        except InstantiationException as err:  # the loader's own error (which dataset, why)
            if err.__cause__ is None:
                raise
            raise err.__cause__ from None
    return _CACHE[key]


def clear_cache() -> None:
    _CACHE.clear()
