"""Turn a composed Hydra config into the resolved config of one run, once.

Composition has already chosen the task (the dataset's natural one from its defaults list,
or ``task=<type>`` from the command line) and the YAML files hold every default as a
number. What is left happens here, before anything is built:

- ``trainer.max_epochs: null`` becomes the dataset's per-task default (``dataset.epochs``);
- the data paths become absolute, relative ones taken against the launch directory
  (:mod:`graphnetz.launch`), and an unset mirror falls back to ``$GRAPHNETZ_DATA_MIRROR``,
  as the loaders do, so the record names the mirror actually read;
- every interpolation is resolved (``${oc.env:...}``, ``${task.encoder_dropout}``, ...);
- the seed, the task type (served by the dataset, matching the task class) and the epochs
  are checked.

The :class:`RunSpec` is what the run builds from; its ``config`` is what the record stores.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from graphnetz.data.mirror import MIRROR_ENV
from graphnetz.launch import absolute_path
from graphnetz.tasks import GraphTask

#: Settings that change how a run executes but not its result (resume an earlier sweep
#: with resume=true, another thread count or from another folder with another mirror, and
#: its complete runs still count): where data and outputs live is not what was run.
RESULT_NEUTRAL_KEYS = ("resume", "num_threads", "checkpoint_every_s", "paths")
#: Task-config keys that describe the task rather than construct its module.
TASK_META_KEYS = ("type", "encoder_dropout")
PATH_KEYS = ("data_dir", "output_dir", "data_mirror")


class ConfigError(ValueError):
    """A run's config asks for something that cannot run; the message says what and why."""


@dataclass(frozen=True)
class RunSpec:
    """One run, resolved: ``config`` has no interpolation and no default left to fill."""

    config: dict[str, Any]
    task_cls: type[GraphTask]
    seed: int
    max_epochs: int

    @property
    def dataset(self) -> str:
        return self.config["dataset"]["name"]

    @property
    def task_type(self) -> str:
        return self.task_cls.task_type

    @property
    def task_key(self) -> str:
        return f"{self.dataset}/{self.task_type}"

    @property
    def model(self) -> str:
        return self.config["model"]["name"]

    @property
    def label(self) -> str:
        """``dataset/task_type model seed=S``: how log lines name the run."""
        return f"{self.task_key} {self.model} seed={self.seed}"

    @property
    def task_cfg(self) -> dict[str, Any]:
        """The task node ready for ``instantiate`` (meta keys stripped)."""
        return {k: v for k, v in self.config["task"].items() if k not in TASK_META_KEYS}

    @property
    def selection(self) -> str:
        return self.config["task"].get("selection", "final")

    def section(self, name: str) -> DictConfig:
        """A config section as a DictConfig (for ``instantiate``)."""
        return OmegaConf.create(self.config[name])


def resolve_run(cfg: DictConfig) -> RunSpec:
    """The resolved run of a composed config; :class:`ConfigError` names what is wrong."""
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed must be an integer, got {seed!r}")
    config = OmegaConf.to_container(cfg, resolve=True)
    config["paths"] = resolved_paths(config.get("paths") or {})
    task_cls = _task_class(config)
    _check_task_keys(task_cls, config)
    dataset = config["dataset"]
    served = list(dataset.get("task_types") or [])
    if task_cls.task_type not in served:
        raise ConfigError(
            f"dataset {dataset['name']!r} does not serve task type {task_cls.task_type!r}; "
            f"it serves {served}"
        )
    _check_tuned_for(config, task_cls.task_type)
    config["trainer"]["max_epochs"] = epochs = _max_epochs(config, task_cls.task_type)
    _check_checkpoint_every(config.get("checkpoint_every_s"))
    return RunSpec(config=config, task_cls=task_cls, seed=seed, max_epochs=epochs)


def resolved_paths(paths: dict[str, Any]) -> dict[str, Any]:
    """``paths`` with the data and output folders absolute and the mirror as used."""
    paths = dict(paths)
    if paths.get("data_mirror") in (None, ""):
        paths["data_mirror"] = os.environ.get(MIRROR_ENV) or None
    for key in PATH_KEYS:
        if paths.get(key) not in (None, ""):
            paths[key] = str(absolute_path(paths[key]))
    return paths


def _task_class(config: dict[str, Any]) -> type[GraphTask]:
    task = config["task"]
    cls = get_class(task["_target_"])
    if not (isinstance(cls, type) and issubclass(cls, GraphTask)):
        raise ConfigError(f"task._target_={task['_target_']!r} is not a GraphTask class")
    if task.get("type", cls.task_type) != cls.task_type:
        raise ConfigError(
            f"task.type={task['type']!r} contradicts task._target_ ({cls.__name__} is "
            f"{cls.task_type!r}); choose the task with task=<type>"
        )
    return cls


def _check_task_keys(task_cls: type[GraphTask], config: dict[str, Any]) -> None:
    """Refuse a ``task.*`` key the task type does not take (set with ``++task.key=...`` in
    a sweep whose other task types have it), naming the settings it has."""
    valid = task_settings(task_cls)
    given = [k for k in config["task"] if k not in TASK_META_KEYS and k != "_target_"]
    foreign = [k for k in given if k not in valid]
    if foreign:
        raise ConfigError(
            f"task.{foreign[0]} does not apply to task type {task_cls.task_type!r} "
            f"(dataset {config['dataset']['name']!r}); its settings are {sorted(valid)}"
        )


def task_settings(task_cls: type[GraphTask]) -> set[str]:
    """The keyword arguments a task class's constructors take (``model`` aside)."""
    names: set[str] = set()
    for klass in task_cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for name, param in inspect.signature(init).parameters.items():
            if param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD):
                names.add(name)
    return names - {"self", "model"}


def _check_tuned_for(config: dict[str, Any], task_type: str) -> None:
    """Refuse a ``+tuned=<study>`` point selected for another dataset, task or model."""
    tuned_for = (config.get("tuning") or {}).get("for")
    if not tuned_for:
        return
    run = {"dataset": config["dataset"]["name"], "task_type": task_type}
    run["model"] = config["model"]["name"]
    if dict(tuned_for) != run:
        raise ConfigError(
            f"+tuned={config['tuning'].get('study')} was selected for {dict(tuned_for)}, "
            f"not for this run {run}; tune this (task, model) or drop +tuned"
        )


def _check_checkpoint_every(every_s: Any) -> None:
    if every_s is None:
        return
    if isinstance(every_s, bool) or not isinstance(every_s, int | float) or every_s < 0:
        raise ConfigError(
            f"checkpoint_every_s must be a number of seconds >= 0 "
            f"(0 = every epoch) or null (off), got {every_s!r}"
        )


def _max_epochs(config: dict[str, Any], task_type: str) -> int:
    epochs = config["trainer"].get("max_epochs")
    if epochs is None:
        per_task = config["dataset"].get("epochs") or {}
        if task_type not in per_task:
            raise ConfigError(
                f"dataset {config['dataset']['name']!r} has no default epochs for "
                f"{task_type!r} (dataset.epochs={dict(per_task)}); set trainer.max_epochs"
            )
        epochs = per_task[task_type]
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ConfigError(f"trainer.max_epochs must be a positive integer, got {epochs!r}")
    return epochs


def result_config(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a stored config that decides a run's result (what resume compares):
    without the neutral keys, and without an empty ``local`` group (present only on
    machines with a ``conf/local/default.yaml``)."""
    return {
        k: v
        for k, v in config.items()
        if k not in RESULT_NEUTRAL_KEYS and not (k == "local" and not v)
    }
