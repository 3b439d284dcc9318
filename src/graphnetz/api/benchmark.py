"""``run_benchmark``: tasks x models x seeds through the same pipeline as ``train.py -m``.

Every run is the real config composed with ``hydra.compose`` (dataset, model, task type,
seed and the caller's overrides) and executed by
:func:`graphnetz.training.run.run_experiment`, so records, skips and failures are exactly
those of a Hydra sweep, and the result is the :class:`BenchmarkReport` ``analyze.py`` builds.
User datasets and models enter as config nodes (Hydra's ConfigStore) whose ``_target_`` is a
lookup in :mod:`graphnetz.api.registry`; both are removed again when the benchmark ends.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from hydra.core.config_store import ConfigStore
from hydra.utils import get_class
from omegaconf import DictConfig

from graphnetz.api import registry
from graphnetz.api.models import (
    ModelSpec,
    conf_models,
    model_spec,
    proxy_class,
    registered_models,
)
from graphnetz.api.tasks import BenchmarkTask, all_tasks, iter_benchmark_tasks
from graphnetz.config_dir import CONF_DIR
from graphnetz.report import BenchmarkReport
from graphnetz.training.run import run_experiment, summarize

# chosen by run_benchmark's own arguments, so an override of them would contradict it
RESERVED_OVERRIDES = {
    "seed": "seeds=",
    "dataset": "tasks= / category=",
    "model": "models=",
    "task": "task_type= / tasks=",
}
_uids = itertools.count()

ModelChoice = str | ModelSpec  # a conf/model YAML name, or a user model


# ---------------------------------------------------------------- inputs
def _conf_name_of_class(cls: type, available: Mapping[str, str]) -> str | None:
    for stem, target in available.items():
        try:
            if get_class(target) is cls:
                return stem
        except Exception:  # a YAML whose class does not import is not this class
            continue
    return None


def select_models(models: Any) -> list[tuple[str, ModelChoice]]:
    """``{name: model}`` (or a list of models) -> (name, conf YAML name | user model spec)."""
    if not models:
        raise ValueError(
            "models= is required: a dict {name: model} or a list of models; a model "
            "is a conf/model name ('gcn'), a registered name, a class or a "
            "(cls, task_type, factory) tuple"
        )
    if isinstance(models, Mapping):
        items = list(models.items())
    elif isinstance(models, (str, type, tuple)):
        raise TypeError(
            "models= takes a dict {name: model} or a list of models, "
            f"got a single {type(models).__name__}"
        )
    else:
        items = [(_default_name(m), m) for m in models]
    names = [name for name, _ in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"model names must be unique; repeated: {repeated}")
    available = conf_models()
    chosen: list[tuple[str, ModelChoice]] = []
    for name, value in items:
        if isinstance(value, str) and value not in registered_models():
            if value not in available:
                raise ValueError(
                    f"model {name!r}: unknown model {value!r}; conf/model: "
                    f"{sorted(available)}; registered: {sorted(registered_models())}"
                )
            chosen.append((name, value))
            continue
        stem = _conf_name_of_class(value, available) if isinstance(value, type) else None
        is_registered = any(s.cls is value for s in registered_models().values())
        chosen.append((name, stem if stem and not is_registered else model_spec(name, value)))
    return chosen


def _default_name(model: Any) -> str:
    if isinstance(model, str):
        return model
    cls = model[0] if isinstance(model, tuple) and model else model
    return getattr(cls, "__name__", str(cls))


def select_tasks(
    category: str | None, task_type: str | None, tasks: Iterable[BenchmarkTask | str] | None
) -> list[BenchmarkTask]:
    if tasks is None:
        selected = list(iter_benchmark_tasks(category, task_type))
    else:
        catalogue = all_tasks()
        selected = []
        for item in [tasks] if isinstance(tasks, (str, BenchmarkTask)) else tasks:
            if isinstance(item, BenchmarkTask):
                selected.append(item)
                continue
            found = [
                t for t in catalogue if item in (t.key, t.name) and task_type in (None, t.task_type)
            ]
            if not found:
                raise ValueError(
                    f"no benchmark task {item!r}"
                    f"{f' of type {task_type!r}' if task_type else ''}; "
                    f"valid: {sorted(t.key for t in catalogue)}"
                )
            selected.extend(found)
    if not selected:
        raise ValueError(
            f"no benchmark task matches category={category!r}, task_type={task_type!r}"
        )
    keys = [t.key for t in selected]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(
            f"tasks must be unique (reports identify them by key); repeated: {repeated}"
        )
    return selected


def _seeds(seeds: Iterable[int]) -> list[int]:
    if isinstance(seeds, int):
        raise TypeError(f"seeds= takes an iterable of integers, e.g. range({seeds}); got {seeds!r}")
    values = list(seeds)
    bad = [s for s in values if isinstance(s, bool) or not isinstance(s, int)]
    if bad or not values:
        raise ValueError(f"seeds= must be a non-empty iterable of integers; got {values!r}")
    return values


def hydra_value(value: Any) -> str:
    """A Python value as Hydra override grammar (``null``, ``true``, ``'text'``, lists, dicts)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} ({type(value).__name__}) as a Hydra override")


def override_strings(
    overrides: Sequence[str] | Mapping[str, Any] | None,
    dotted: Mapping[str, Any],
    epochs: int | None,
) -> list[str]:
    """Hydra overrides from strings and/or ``{"trainer.max_epochs": 5}`` dicts."""
    if isinstance(overrides, str):
        overrides = [overrides]
    strings = list(overrides or []) if not isinstance(overrides, Mapping) else []
    pairs = {**(overrides if isinstance(overrides, Mapping) else {}), **dotted}
    strings += [f"{key}={hydra_value(value)}" for key, value in pairs.items()]
    keys = [s.split("=", 1)[0].lstrip("+~") for s in strings]
    for key in keys:
        if key in RESERVED_OVERRIDES:
            raise ValueError(
                f"override {key!r} is set by run_benchmark itself; use "
                f"{RESERVED_OVERRIDES[key]} instead"
            )
    if epochs is not None:
        if "trainer.max_epochs" in keys:
            raise ValueError("give epochs= or the trainer.max_epochs override, not both")
        strings.append(f"trainer.max_epochs={int(epochs)}")
    return strings


# ---------------------------------------------------------------- configs
@contextmanager
def stored(nodes: Mapping[tuple[str, str], dict]) -> Iterator[None]:
    """Config nodes in Hydra's ConfigStore (``group=name`` choices) for the block's duration."""
    store = ConfigStore.instance()
    new_groups = {group for group, _ in nodes} - set(store.repo)
    for (group, name), node in nodes.items():
        store.store(group=group, name=name, node=node)
    try:
        yield
    finally:
        for group, name in nodes:
            store.repo.get(group, {}).pop(f"{name}.yaml", None)
        for group in new_groups:
            if not store.repo.get(group, True):
                del store.repo[group]


def loader_target(seed_aware: bool) -> str:
    fn = registry.registered_seeded_dataset if seed_aware else registry.registered_dataset
    return f"{fn.__module__}.{fn.__name__}"


def _model_node(name: str, spec: ModelSpec, key: str) -> dict[str, Any]:
    return {
        "name": name,
        "_target_": f"graphnetz.api.registry.{key}",
        **spec.hyperparameters(),
        "defined_in": spec.defined_in,
    }


def compose_runs(
    tasks: list[BenchmarkTask],
    models: list[tuple[str, ModelChoice]],
    overrides: list[str],
    stack: ExitStack,
) -> list[tuple[BenchmarkTask, str, DictConfig]]:
    """One composed config per (task, model), seed 0; user objects bound on ``stack``."""
    run = next(_uids)
    nodes, bindings = {}, {}
    dataset_choice, model_choice = {}, {}
    for task in tasks:
        name = f"_api{run}_dataset_{task.uid}"
        nodes[("dataset", name)] = task.dataset_config(loader_target)
        dataset_choice[task.key] = name
        if task.config is None:
            bindings[f"dataset_{task.uid}"] = task
    for name, choice in models:
        if isinstance(choice, str):
            model_choice[name] = [f"model={choice}", f"model.name={hydra_value(name)}"]
            continue
        key = f"model_{choice.uid}"
        bindings[key] = proxy_class(choice, key)
        nodes[("model", f"_api{run}_{key}")] = _model_node(name, choice, key)
        model_choice[name] = [f"model=_api{run}_{key}"]
    stack.enter_context(registry.bound(bindings))
    stack.enter_context(stored(nodes))
    composed = []
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for task in tasks:
            for name, _ in models:
                chosen = [
                    f"dataset={dataset_choice[task.key]}",
                    *model_choice[name],
                    f"task={task.task_type}",
                    "seed=0",
                ]
                try:
                    cfg = compose("config", overrides=chosen + overrides)
                except Exception as err:
                    raise ValueError(
                        f"cannot compose the config of {task.key} x {name} with "
                        f"overrides {overrides}: {err}"
                    ) from err
                composed.append((task, name, cfg))
    return composed


# ---------------------------------------------------------------- the benchmark
def run_benchmark(
    category: str | None = None,
    models: Any = None,
    seeds: Iterable[int] = range(10),
    *,
    task_type: str | None = None,
    tasks: Iterable[BenchmarkTask | str] | None = None,
    epochs: int | None = None,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] | Mapping[str, Any] | None = None,
    progress: bool = True,
    **dotted_overrides: Any,
) -> BenchmarkReport:
    """Run every selected task x model x seed and return the statistical report.

    Tasks: ``tasks=`` (``BenchmarkTask`` objects, e.g. from :func:`task_from_dataset`, or
    catalogue names ``"cora"`` / ``"cora/link_pred"``), else the catalogue filtered by
    ``category`` and ``task_type``. ``models``: ``{name: model}`` where a model is a
    conf/model name (``"gcn"``), a registered name, a class (a class with a conf/model YAML
    uses that YAML's hyperparameters) or ``(cls, task_type, factory)``. ``epochs`` sets
    ``trainer.max_epochs`` for every task (default: each task's epochs). Overrides are Hydra
    strings (``overrides=["task.lr=5e-3"]``) or dotted keys
    (``**{"trainer.max_epochs": 5, "model.hidden_channels": 32}``). With ``out_dir``, each
    record goes to ``out_dir/<task>/<model>/seed_<s>/result.json``. Incompatible pairs are
    skipped and failed runs recorded; both are listed by the report.
    """
    selected = select_tasks(category, task_type, tasks)
    chosen = select_models(models)
    seed_list = _seeds(seeds)
    strings = override_strings(overrides, dotted_overrides, epochs)
    records = []
    with ExitStack() as stack:
        composed = compose_runs(selected, chosen, strings, stack)
        total = len(composed) * len(seed_list)
        for i, ((task, name, cfg), seed) in enumerate(itertools.product(composed, seed_list), 1):
            cfg = copy.deepcopy(cfg)
            cfg.seed = seed
            run_dir = None if out_dir is None else Path(out_dir) / task.key / name / f"seed_{seed}"
            record = run_experiment(cfg, run_dir)
            records.append(record)
            if progress:
                print(f"[{i}/{total}] {summarize(record)}", flush=True)
    return BenchmarkReport.from_records([record.to_dict() for record in records])


__all__ = ["run_benchmark"]
