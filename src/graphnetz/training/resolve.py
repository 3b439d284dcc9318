"""Turn a composed Hydra config into the resolved config of one run, once.

Composition has already chosen the task (the dataset's natural one from its defaults list,
or ``task=<type>`` from the command line) and the YAML files hold every default as a
number. What is left happens here, before anything is built:

- ``trainer.max_epochs: null`` becomes the dataset's per-task default (``dataset.epochs``);
- the data paths become absolute, relative ones taken against the launch directory
  (:mod:`graphnetz.launch`), and an unset mirror falls back to ``$GRAPHNETZ_DATA_MIRROR``,
  as the loaders do, so the record names the mirror actually read;
- every interpolation is resolved (``${oc.env:...}``, ``${task.encoder_dropout}``, ...);
- the seed, the task type (served by the dataset, matching the task class), the epochs,
  the trainer's ``deterministic`` and ``check_val_every_n_epoch``, the types and ranges of
  the numeric settings (``task.lr``, ``task.weight_decay``, ``task.patience``, the
  dropouts, ``num_threads``), the model's keys (against its constructor) and its integer
  settings are checked, each refusal naming the key, the value and what is valid.

The :class:`RunSpec` is what the run builds from; its ``config`` is what the record stores.
"""

from __future__ import annotations

import inspect
import math
import os
import typing
from dataclasses import dataclass
from typing import Any

from hydra.utils import get_class
from omegaconf import DictConfig, OmegaConf

from graphnetz.data.mirror import MIRROR_ENV
from graphnetz.data.splits import split_spec
from graphnetz.launch import absolute_path
from graphnetz.run_identity import (  # noqa: F401  (result_config: re-exported)
    RESULT_NEUTRAL_KEYS,
    config_identity,
    config_value,
    result_config,
    run_dir_name,
)
from graphnetz.tasks import GraphTask

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
    def identity(self) -> str:
        """The run's identity (:mod:`graphnetz.run_identity`): what resume and the report
        key runs by."""
        return config_identity(self.config)

    @property
    def run_dir_name(self) -> str:
        """``<dataset>_<task type>_<model>_s<seed>_<short identity>``."""
        return run_dir_name(self.dataset, self.task_type, self.model, self.seed, self.identity)

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
    _check_numbers(config)
    _check_trainer(config["trainer"])
    _check_model_keys(config["model"])
    dataset = config["dataset"]
    served = list(dataset.get("task_types") or [])
    if task_cls.task_type not in served:
        raise ConfigError(
            f"dataset {dataset['name']!r} does not serve task type {task_cls.task_type!r}; "
            f"it serves {served}"
        )
    if "split" in dataset:  # one form for the tasks: None or a dict with a valid type
        try:
            dataset["split"] = split_spec(dataset["split"])
        except (TypeError, ValueError) as err:
            raise ConfigError(str(err)) from None
    _check_tuned_for(config, task_cls.task_type)
    config["trainer"]["max_epochs"] = epochs = _max_epochs(config, task_cls.task_type)
    _check_model_integers(config["model"])
    _check_checkpoint_every(config.get("checkpoint_every_s"))
    _check_fit_loop(config.get("fit_loop", "auto"))
    _check_accelerator(config["trainer"].get("accelerator", "auto"))
    _check_stack_seeds(config.get("stack_seeds", True))
    _check_resume(config.get("resume", False))
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
    a sweep whose other task types have it, or misspelt), naming the closest setting it has
    and all of them."""
    import difflib

    # the meta keys are settings too, but for ``type``: task=<type> chooses it
    valid = task_settings(task_cls) | (set(TASK_META_KEYS) - {"type"})
    given = [k for k in config["task"] if k not in TASK_META_KEYS and k != "_target_"]
    foreign = [k for k in given if k not in valid]
    if foreign:
        close = difflib.get_close_matches(foreign[0], sorted(valid), n=1)
        hint = f"did you mean task.{close[0]}? " if close else ""
        raise ConfigError(
            f"task.{foreign[0]} does not apply to task type {task_cls.task_type!r} "
            f"(dataset {config['dataset']['name']!r}); {hint}its settings are {sorted(valid)}"
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


def _is_number(value: Any) -> bool:
    """A real number (an int is one; a bool, a string or None is not)."""
    return not isinstance(value, bool) and isinstance(value, int | float)


#: The dropout probabilities of a run: a number in [0, 1) each, where the config sets it.
DROPOUT_KEYS = ("task.encoder_dropout", "model.dropout", "model.attn_dropout")


def _count_or_null(value: Any) -> bool:
    """An integer >= 1 (not a bool), or None."""
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1)


def _check_numbers(config: dict[str, Any]) -> None:
    """Refuse a numeric setting of the wrong type or range (``task.lr=abc``,
    ``task.patience=2.5``, ``num_threads=0``) before anything is built, naming the key,
    the value and the valid range (Python would say only what it could not convert)."""
    task = config["task"]
    if "lr" in task:
        lr = task["lr"]
        if not (_is_number(lr) and lr > 0 and math.isfinite(lr)):
            raise ConfigError(f"task.lr must be a positive (finite) number, got {lr!r}")
    if "weight_decay" in task:
        decay = task["weight_decay"]
        if not (_is_number(decay) and decay >= 0 and math.isfinite(decay)):
            raise ConfigError(f"task.weight_decay must be a (finite) number >= 0, got {decay!r}")
    patience = task.get("patience")
    if not _count_or_null(patience):
        raise ConfigError(
            f"task.patience must be an integer >= 1 (epochs without a better validation "
            f"metric before stopping) or null (off), got {patience!r}"
        )
    # a model without _target_ is built by the Python API's own code, its settings its own
    model_keys = DROPOUT_KEYS if "_target_" in config["model"] else DROPOUT_KEYS[:1]
    for key in model_keys:
        section, _, name = key.partition(".")
        if name not in config[section]:
            continue
        value = config[section][name]
        if not (_is_number(value) and 0 <= value < 1):
            raise ConfigError(f"{key} must be a number in [0, 1), got {value!r}")
    threads = config.get("num_threads")
    if not _count_or_null(threads):
        raise ConfigError(
            f"num_threads must be an integer >= 1 (torch CPU threads) or null (chosen by the "
            f"graph's size), got {threads!r}"
        )


#: ``trainer.deterministic``: Lightning's values (null: Lightning's default, not
#: deterministic), all of which the lean loop takes too (lean_loop.LEAN_TRAINER_SETTINGS).
DETERMINISTIC = (True, False, "warn", None)


def _check_trainer(trainer: dict[str, Any]) -> None:
    deterministic = trainer.get("deterministic")
    if not (deterministic is None or isinstance(deterministic, bool) or deterministic == "warn"):
        raise ConfigError(
            f"trainer.deterministic={deterministic!r} is not valid; choose true (deterministic "
            "algorithms: same config and seed, same metrics), false, warn (warn where an "
            "operation has no deterministic algorithm) or null"
        )
    if "check_val_every_n_epoch" in trainer:
        every = trainer["check_val_every_n_epoch"]
        if every is None or not _count_or_null(every):
            raise ConfigError(
                f"trainer.check_val_every_n_epoch must be a positive integer (evaluate every "
                f"n-th epoch, and the last), got {every!r}"
            )


def model_settings(cls: type) -> set[str] | None:
    """The settings (``model.<key>``) a model class's constructor takes, or None where it
    takes any: a ``**kwargs`` whose use is unknown. A :class:`NodeEncoder`'s
    ``**layer_kwargs`` are its ``make_layer``'s; its subclasses' ``**kwargs`` its own."""
    from torch import nn

    from graphnetz.models.encoders import NodeEncoder

    def named(function: Any) -> tuple[set[str], bool]:
        params = inspect.signature(function).parameters.values()
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        names = {p.name for p in params if p.kind in kinds}
        return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)

    names: set[str] = set()
    for klass in getattr(cls, "__mro__", ()):
        if klass in (nn.Module, object):
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        own, takes_any = named(init)
        names |= own
        if not takes_any:
            break
        if klass is NodeEncoder:
            layer, layer_takes_any = named(cls.make_layer)
            if layer_takes_any:
                return None
            names |= layer - {"d_in", "d_out", "last"}
            break
        if not (isinstance(klass, type) and issubclass(klass, NodeEncoder)):
            return None
    return names - {"self"}


def _check_model_keys(model: dict[str, Any]) -> None:
    """Refuse ``+model.<key>=...`` that the model's constructor does not take, naming the
    closest setting it has and all of them (not a TypeError from inside the model)."""
    import difflib

    from graphnetz.training.build import META_KEYS

    try:
        cls = get_class(model["_target_"])
    except Exception:  # no target (built by the Python API) or an unknown one: not here
        return
    valid = model_settings(cls)
    if valid is None:
        return
    given = {"in_channels", "out_channels", *META_KEYS}  # by the data, by the framework
    valid |= given
    unknown = [
        k
        for k in model
        if k not in valid and not (k.startswith("_") and k.endswith("_"))  # _target_ & co.
    ]
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(valid), n=1)
        hint = f"did you mean model.{close[0]}? " if close else ""
        raise ConfigError(
            f"unknown setting 'model.{unknown[0]}' for model {model.get('name')!r} "
            f"({cls.__name__}); {hint}model has {sorted(valid - given)}"
        )


def _check_tuned_for(config: dict[str, Any], task_type: str) -> None:
    """Refuse a ``+tuned=<study>`` point selected for another dataset, task or model."""
    tuned_for = (config.get("tuning") or {}).get("for")
    if not tuned_for:
        return
    run = {"dataset": config["dataset"]["name"], "task_type": task_type}
    run["model"] = config["model"]["name"]
    study = config["tuning"].get("study")
    if dict(tuned_for) != run:
        raise ConfigError(
            f"+tuned={study} was selected for {dict(tuned_for)}, "
            f"not for this run {run}; tune this (task, model) or drop +tuned"
        )
    tuning = config["tuning"]
    for what, expected in (
        ("selected", tuning.get("params")),
        ("searched at", tuning.get("values")),
    ):
        for key, value in (expected or {}).items():
            here = config_value(config, key)
            if here != value:
                raise ConfigError(
                    f"{key}={here!r} in this run, but +tuned={study} was {what} {key}={value!r}; "
                    f"drop the override of {key} or drop +tuned"
                )


def _check_checkpoint_every(every_s: Any) -> None:
    if every_s is None:
        return
    if isinstance(every_s, bool) or not isinstance(every_s, int | float) or every_s < 0:
        raise ConfigError(
            f"checkpoint_every_s must be a number of seconds >= 0 "
            f"(0 = every epoch) or null (off), got {every_s!r}"
        )


#: ``fit_loop``: auto = the lean loop where it reproduces Lightning's (training/lean_loop.py).
FIT_LOOPS = ("auto", "lightning")


def _check_fit_loop(fit_loop: Any) -> None:
    if fit_loop not in FIT_LOOPS:
        raise ConfigError(f"fit_loop={fit_loop!r} is not valid; choose one of {list(FIT_LOOPS)}")


#: Lightning's accelerator names that need a CUDA GPU ("gpu" would take Apple's MPS
#: where there is no CUDA, which these models cannot run on: see accelerators.py).
DEVICE_ACCELERATORS = ("gpu", "cuda")
UNSUPPORTED_ACCELERATORS = {
    "mps": "Apple's MPS has no sparse CSR tensors and no float64, which the models' "
    "adjacency caches and the multi-label metrics need",
}


def _check_accelerator(accelerator: Any) -> None:
    """Refuse ``trainer.accelerator=gpu`` (cuda) on a machine without a CUDA GPU before
    Lightning says only that no backend was found (or picks MPS), and ``mps``."""
    if not isinstance(accelerator, str):
        return
    name = accelerator.lower()
    if name in UNSUPPORTED_ACCELERATORS:
        raise ConfigError(
            f"trainer.accelerator={accelerator!r} is not supported: "
            f"{UNSUPPORTED_ACCELERATORS[name]}; use trainer.accelerator=cpu (or auto, which "
            "takes a CUDA GPU where there is one and the CPU elsewhere)"
        )
    if name not in DEVICE_ACCELERATORS:
        return
    import torch

    from graphnetz.training.accelerators import cuda_available

    if not cuda_available():
        raise ConfigError(
            f"trainer.accelerator={accelerator!r} needs a CUDA GPU, which this torch "
            f"({torch.__version__}) does not see; use trainer.accelerator=cpu, or auto (a "
            "CUDA GPU where there is one)"
        )


def _check_stack_seeds(stack_seeds: Any) -> None:
    if not isinstance(stack_seeds, bool):
        raise ConfigError(
            f"stack_seeds={stack_seeds!r} is not valid; choose true (a cell's seeds trained "
            "together where they can be) or false (one at a time)"
        )


def _check_resume(resume: Any) -> None:
    if not isinstance(resume, bool):
        raise ConfigError(
            f"resume={resume!r} is not valid; choose true (skip the runs whose record is "
            "complete, continue cut-off ones from their checkpoints) or false (run them all)"
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


def _check_model_integers(model: dict[str, Any]) -> None:
    """Refuse ``model.<key>=1.5`` (or ``true``) where the model's constructor takes an
    ``int``, naming the key, before a layer fails with a message about tensor shapes."""
    try:
        cls = get_class(model["_target_"])
    except Exception:  # an unknown target: instantiation names it
        return
    hints: dict[str, Any] = {}
    for klass in reversed(getattr(cls, "__mro__", ())):
        init = klass.__dict__.get("__init__")
        if init is not None and klass is not object:
            try:
                hints.update(typing.get_type_hints(init))
            except Exception:  # unresolvable annotations: nothing to check against
                continue
    for key, value in model.items():
        if hints.get(key) is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ConfigError(
                f"model.{key} must be an integer (model {model.get('name')!r}), got {value!r}"
            )


def composed_identity(cfg: DictConfig) -> str:
    """The identity of a composed config that cannot be resolved: of the config as
    composed (what the failed run's record stores)."""
    return config_identity(OmegaConf.to_container(cfg, resolve=False))


def composed_run_dir_name(cfg: DictConfig) -> str:
    """The run directory name of a composed config (:attr:`RunSpec.run_dir_name`), computed
    without loading data; a config that cannot be resolved is named by its composed form,
    so its failed record still gets a directory of its own."""
    try:
        return resolve_run(cfg).run_dir_name
    except Exception:  # the run itself records why it cannot run
        pick = lambda key: OmegaConf.select(cfg, key, default=None)  # noqa: E731
        return run_dir_name(
            pick("dataset.name"),
            pick("task.type"),
            pick("model.name"),
            pick("seed"),
            composed_identity(cfg),
        )
