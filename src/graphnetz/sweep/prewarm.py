"""First-use costs paid once in the launching process, before a pool's workers fork.

Every worker would otherwise pay them again in its first jobs: importing a dataset
loader's module (the PyG loaders' chain: about 0.1-0.3 s) and, per message-passing
layer class, the ``propagate`` code PyG generates from a Jinja template when the class
is first instantiated (about 0.1 s per class here). The launcher builds one small
instance of each model the sweep uses (with stand-in sizes) and imports each dataset's
loader; the workers inherit both with the fork.

Nothing here changes a run: no data is loaded, the global random state is restored
after the models are built (a run seeds itself anyway), and a model or loader that
cannot be prepared this way is skipped; its jobs pay the cost themselves, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from omegaconf import DictConfig

log = logging.getLogger(__name__)
GROUPS = ("model", "dataset")
STAND_IN_CHANNELS = (8, 2)  # in, out: enough to build every layer of an encoder


def representative_jobs(jobs: Iterable[tuple[int, Sequence[str]]]) -> list[tuple[int, list[str]]]:
    """One job per distinct ``model=`` and per distinct ``dataset=`` choice in the sweep
    (the first job when the sweep varies neither): the configs worth composing."""
    chosen: dict[tuple[str, str], tuple[int, list[str]]] = {}
    first = None
    for idx, overrides in jobs:
        first = first or (idx, list(overrides))
        for override in overrides:
            key, _, value = override.partition("=")
            if key in GROUPS:
                chosen.setdefault((key, value), (idx, list(overrides)))
    unique = dict(chosen.values())  # job number -> overrides, in sweep order
    return [(idx, unique[idx]) for idx in sorted(unique)] or ([first] if first else [])


def prewarm(
    jobs: Iterable[tuple[int, Sequence[str]]],
    job_config: Callable[[int, Sequence[str]], DictConfig],
) -> None:
    """Import every loader and build one instance of every model of ``jobs``."""
    import torch
    from hydra.utils import get_method, instantiate

    from graphnetz.training.build import model_kwargs

    loaders: set[str] = set()
    models: set[str] = set()
    with torch.random.fork_rng(devices=[]):
        for idx, overrides in representative_jobs(jobs):
            try:
                cfg = job_config(idx, overrides)
                loader = str(cfg.dataset.loader._target_)
                if loader not in loaders:
                    loaders.add(loader)
                    get_method(loader)
                kwargs = model_kwargs(cfg.model)
                if kwargs.get("_target_") not in models:
                    models.add(kwargs.get("_target_"))
                    in_channels, out_channels = STAND_IN_CHANNELS
                    instantiate(kwargs, in_channels=in_channels, out_channels=out_channels)
            except Exception as err:  # noqa: BLE001 - best effort: the job pays it itself
                log.debug("pre-warming job #%d skipped: %s: %s", idx, type(err).__name__, err)
