"""Sweep job configs composed once per choice of config groups.

Hydra composes every job's config from scratch (defaults tree, YAML loads and merges:
about 80 ms here), twice per job under the basic sweeper (once to check the batch, once
to launch it), which on small graphs costs more than the training. The jobs of a sweep
mostly share their config-group choices and differ in plain values (``seed=3``,
``task.lr=0.01``). Hydra itself applies such value overrides to the composed config after
composition, in order (``ConfigLoaderImpl._apply_overrides_to_config``); so
:class:`CachedComposition` composes each distinct set of group (and ``hydra.*``)
overrides once, applies a job's value overrides to a copy with that same Hydra function,
and sets what Hydra derives from the overrides (``hydra.overrides.task``,
``hydra.job.override_dirname``). The result equals Hydra's own composition
(``tests/test_composition.py`` compares them on the sweep shapes we ship).

Hydra's sweeper composes every job once to check the batch before
launching it, and the launcher composes it again: our sweeper composes ahead
(:meth:`CachedComposition.compose_ahead`) and the launcher's call for the same job, in
this process, takes that config instead of composing a second one.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra.errors import ConfigCompositionException
from omegaconf import DictConfig, OmegaConf, open_dict

#: Job configs kept between the check of a batch and its launch (a bound on memory for
#: sweeps of many thousand jobs; the rest are composed again at launch).
MAX_READY = 4096


class CachedComposition:
    """A Hydra config loader that composes a sweep job's config once per group choice.

    Everything but :meth:`load_sweep_config` is the wrapped loader's own."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader
        #: (master config, group overrides) -> the composed config
        self._composed: dict[tuple[int, tuple[str, ...]], DictConfig] = {}
        #: (master config, the job's overrides) -> its config, composed ahead of its launch
        self._ready: dict[tuple[int, tuple[str, ...]], DictConfig] = {}
        #: (master config, the job's hydra.searchpath) -> the repository it composes from
        self._repositories: dict[tuple[int, tuple[str, ...]], Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # never delegate our own state (pickling looks these up)
            raise AttributeError(name)
        return getattr(self._loader, name)

    def __getstate__(self) -> dict[str, Any]:
        # workers compose theirs
        return {"_loader": self._loader, "_composed": {}, "_ready": {}, "_repositories": {}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def compose_ahead(
        self, master_config: DictConfig, sweep_overrides: Sequence[str]
    ) -> DictConfig:
        """Compose a job's config now (raising what composing it raises) and keep it for
        the launcher's call for the same job (at most :data:`MAX_READY` kept)."""
        config = self.load_sweep_config(master_config, sweep_overrides)
        if len(self._ready) < MAX_READY:
            self._ready[(id(master_config), tuple(sweep_overrides))] = config
        return config

    def load_sweep_config(
        self, master_config: DictConfig, sweep_overrides: Sequence[str]
    ) -> DictConfig:
        ready = self._ready.pop((id(master_config), tuple(sweep_overrides)), None)
        if ready is not None:
            return ready
        parsed = OverridesParser.create().parse_overrides(list(sweep_overrides))
        repository = self._repository(master_config, parsed)
        deferred = [_is_value_override(o, repository) for o in parsed]
        kept = tuple(o.input_line for o, later in zip(parsed, deferred, strict=True) if not later)
        key = (id(master_config), kept)
        if key not in self._composed:
            self._composed[key] = self._loader.load_sweep_config(master_config, list(kept))
        config = copy.deepcopy(self._composed[key])
        values = [o for o, later in zip(parsed, deferred, strict=True) if later]
        ConfigLoaderImpl._apply_overrides_to_config(values, config)
        _set_override_bookkeeping(config, parsed)
        return config

    def _repository(self, master_config: DictConfig, parsed: list[Override]) -> Any:
        """The config repository Hydra composes this job from: the loader's, extended by
        ``hydra.searchpath`` (of the primary config, the command line or the job), so that
        a group found only there (``+tuned=X`` from a study's config root) is a group."""
        job_paths = tuple(o.input_line for o in parsed if _is_searchpath(o))
        key = (id(master_config), job_paths)
        if key not in self._repositories:
            overrides = [*master_config.hydra.overrides.hydra, *job_paths]
            _, repository = self._loader._parse_overrides_and_create_caching_repo(
                master_config.hydra.job.config_name, overrides
            )
            self._repositories[key] = repository
        return self._repositories[key]


def _is_searchpath(override: Override) -> bool:
    return override.get_key_element() == "hydra.searchpath"


def _is_value_override(override: Override, repository: Any) -> bool:
    """Hydra's own rule for an override it applies after composition (a config override,
    not a group choice), leaving ``hydra.*`` keys to full composition."""
    if override.is_hydra_override():
        return False
    is_group = repository.group_exists(override.key_or_group)
    return isinstance(override.value(), dict) or not is_group


class SameRunTwice(ConfigCompositionException):
    """Two jobs of one sweep are the same run: they would share a folder and a record
    (Hydra prints it as a message, not a traceback, and launches nothing)."""


def check_distinct_run(seen: dict[str, list[str]], config: DictConfig, overrides: list[str]):
    """Refuse a job whose run (its folder: dataset, task, model, seed and identity) an
    earlier job of the sweep already is; ``seen`` maps folders to overrides, filled here.
    Overrides that differ only in settings that do not change a result (``num_threads``,
    ``paths.*``, ``resume``) name the same run: both jobs would write one record."""
    from graphnetz.training.resolve import composed_run_dir_name

    job = OmegaConf.masked_copy(config, [k for k in config if k != "hydra"])
    name = composed_run_dir_name(job)
    if name in seen and seen[name] == overrides:
        raise SameRunTwice(f"the sweep lists the same job twice ({' '.join(overrides)})")
    if name in seen:
        raise SameRunTwice(
            f"the sweep holds the same run twice ({name}): {' '.join(seen[name])} and "
            f"{' '.join(overrides)} resolve to one run: they differ only in settings that do "
            f"not change a result (num_threads, paths, resume, checkpointing) or in values "
            f"that resolve alike (null and the default); sweep such a setting in separate "
            f"sweeps, or drop the repeated value"
        )
    seen[name] = overrides


def _set_override_bookkeeping(config: DictConfig, parsed: list[Override]) -> None:
    """``hydra.overrides.task`` and ``hydra.job.override_dirname`` of all the job's
    overrides, in their order, as Hydra's composition sets them."""
    task = [o for o in parsed if not o.is_hydra_override()]
    dirname = config.hydra.job.config.override_dirname
    with open_dict(config.hydra):
        config.hydra.overrides.task = [o.input_line for o in task]
        config.hydra.job.override_dirname = get_overrides_dirname(
            overrides=task,
            kv_sep=dirname.kv_sep,
            item_sep=dirname.item_sep,
            exclude_keys=dirname.exclude_keys,
        )
