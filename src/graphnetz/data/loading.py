"""Load the dataset a run asks for, once per process (and per seed for seed-aware loaders).

A dataset config names its loader with ``_target_``. Loaders that accept a ``seed`` keyword
generate data (synthetic graphs) and are called with the run seed, so variance across
seeds includes resampling the data; all others are loaded once and reused across runs.
The others are staged and processed under the data directory's lock
(:mod:`graphnetz.data.locking`), so parallel workers never see a half-written file. The
mirror setting is only checked by the loaders that read it: a bad mirror path does not
fail a dataset that needs no files.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from hydra.errors import InstantiationException
from hydra.utils import get_method, instantiate
from omegaconf import DictConfig, OmegaConf

from graphnetz.data.locking import preparing
from graphnetz.data.mirror import mirror_location

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
    mirror_path = mirror_location(mirror)
    key = (
        OmegaConf.to_yaml(cfg),
        str(Path(data_dir).resolve()),
        str(mirror_path),
        seed if seeded else None,
    )
    if key not in _CACHE:
        kwargs = {"root": str(data_dir), "mirror": mirror_path}
        if seeded:  # generated in memory from the seed: nothing on disk to guard
            _CACHE[key] = _instantiate(cfg, **kwargs, seed=seed)
        else:
            with preparing(data_dir, cfg["_target_"]):
                _CACHE[key] = _instantiate(cfg, **kwargs)
    return _CACHE[key]


def _instantiate(cfg: DictConfig, **kwargs: Any) -> Any:
    """``instantiate``, re-raising the loader's own error unwrapped (its message names the
    dataset, the files and the fix; Hydra's wrapper would only repeat it)."""
    try:
        return instantiate(cfg, **kwargs)
    except InstantiationException as err:
        if err.__cause__ is None:
            raise
        raise err.__cause__ from None


def clear_cache() -> None:
    _CACHE.clear()
