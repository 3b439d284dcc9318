"""Benchmark tasks: one dataset x one task type, from the dataset configs or from user data.

The catalogue is built from ``conf/dataset/*.yaml`` (a config serving several task types
gives one task per type, its natural task first) plus the tasks users register under a
category with :func:`register_task`. A user dataset becomes a task with
:func:`task_from_dataset`; it is checked for what its task type needs as early as possible.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from omegaconf import OmegaConf
from torch.utils.data import Dataset
from torch_geometric.data.data import BaseData

from graphnetz.config_dir import CONF_DIR
from graphnetz.task_types import GRAPH, TASK_LEVELS
from graphnetz.tasks import TASK_CLASSES, task_class
from graphnetz.tasks.node_tasks import MASKS, require_attributes

GRAPH_TASKS = tuple(t for t, level in TASK_LEVELS.items() if level == GRAPH)
USER_CATEGORY = "custom"
DATASET_OBJECTS = (BaseData, Dataset, list, tuple, dict)

_uids = itertools.count()
# category -> task key ("name/task_type") -> task; only what register_task added
_REGISTERED: dict[str, dict[str, BenchmarkTask]] = {}


@dataclass(frozen=True)
class BenchmarkTask:
    """One benchmark task: ``name`` (the dataset) served as ``task_type``.

    ``source`` is a loader config (``{"_target_": ..., **kwargs}``, for tasks from
    ``conf/dataset``) or a user dataset: a ``Data`` object, a list/``Dataset`` of graphs, a
    ``{"train", "val", "test"}`` dict of graph lists, or a callable returning one of these
    (called with ``seed=`` when it takes a ``seed`` keyword, else called once and reused).
    ``epochs`` is the task's default number of epochs; ``split`` the ``dataset.split`` value.
    """

    name: str
    category: str
    task_type: str
    epochs: int | None  # None: the config names none (trainer.max_epochs must be given)
    source: Any
    split: dict | None = None
    config: dict | None = field(default=None, repr=False)  # the dataset YAML, when from conf/
    uid: int = field(default_factory=lambda: next(_uids), repr=False, compare=False)

    @property
    def key(self) -> str:
        """The task's label in run records and reports: ``<dataset>/<task_type>``."""
        return f"{self.name}/{self.task_type}"

    @property
    def seed_aware(self) -> bool:
        return takes_seed(self.source)

    def dataset_config(self, loader_target: Callable[[bool], str]) -> dict[str, Any]:
        """The ``dataset`` config node of a run; ``loader_target(seed_aware)`` names the
        lookup function user data is loaded through."""
        tt = self.task_type
        if self.config is not None:
            epochs = dict(self.config.get("epochs") or {})
            if self.epochs is not None:
                epochs[tt] = self.epochs
            return {
                **self.config,
                "epochs": epochs,
                "split": self.split,
                "loader": dict(self.source),
            }
        return {
            "name": self.name,
            "category": self.category,
            "task_types": [tt],
            "epochs": {tt: self.epochs},
            "features": f"user dataset ({describe(self.source)})",
            "split": self.split,
            "loader": {"_target_": loader_target(self.seed_aware), "key": f"dataset_{self.uid}"},
        }


def describe(obj: Any) -> str:
    """``module.qualname`` of a loader function/class, or of a data object's type."""
    named = obj if callable(obj) and not isinstance(obj, DATASET_OBJECTS) else type(obj)
    return f"{getattr(named, '__module__', '?')}.{getattr(named, '__qualname__', repr(named))}"


def takes_seed(source: Any) -> bool:
    if isinstance(source, DATASET_OBJECTS) or not callable(source):
        return False
    try:
        return "seed" in inspect.signature(source).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False


def _choice(what: str, value: Any, valid) -> None:
    if value not in valid:
        raise ValueError(f"unknown {what} {value!r}; valid: {sorted(valid)}")


# ---------------------------------------------------------------- dataset checks
def _first_graph(data: Any) -> Any:
    """The graph of a one-graph dataset (a ``Data`` object, or a Dataset/list holding it)."""
    return data if isinstance(data, BaseData) else data[0]


def check_dataset(data: Any, task_type: str, split: dict | None = None) -> None:
    """Raise ``ValueError`` naming what ``data`` lacks for ``task_type``."""
    if not isinstance(data, DATASET_OBJECTS):
        raise TypeError(
            f"a {task_type!r} dataset must be a torch_geometric Data object, a "
            f"list/Dataset of graphs or a train/val/test dict; got {describe(data)}"
        )
    if task_type in GRAPH_TASKS:
        if isinstance(data, BaseData):
            raise ValueError(
                f"task {task_type!r} needs a list or Dataset of graphs, got a "
                "single graph; use node_cls/link_pred for one graph"
            )
        if isinstance(data, dict):
            missing = [s for s in ("train", "val", "test") if s not in data]
            if missing:
                raise ValueError(
                    f"a canonical graph split needs keys ['train', 'val', 'test']; "
                    f"missing {missing}"
                )
            data = data["train"]
        if len(data) == 0:
            raise ValueError(f"the dataset for task {task_type!r} holds no graphs")
        require_attributes(data[0], ("x", "edge_index", "y"), task_type)
        return
    graph = _first_graph(data)
    if task_type == "link_pred":
        require_attributes(graph, ("edge_index",), task_type)  # x is optional (degree features)
        return
    require_attributes(graph, ("x", "edge_index", "y"), task_type)
    if not (split and split.get("type") == "random"):
        try:
            require_attributes(graph, MASKS, task_type)
        except ValueError as err:
            raise ValueError(
                f"{err} Or ask for a seeded random split: split='random' "
                "(or {'type': 'random', 'train': 0.6, 'val': 0.2})."
            ) from None


def _normalise_split(split: Any) -> dict | None:
    if split is None:
        return None
    if split == "random":
        return {"type": "random"}
    if isinstance(split, Mapping):
        return dict(split)
    raise TypeError(
        f"split must be None (the dataset's masks/canonical split), 'random' or a "
        f"dict like {{'type': 'random', 'train': 0.6, 'val': 0.2}}; got {split!r}"
    )


def task_from_dataset(
    name: str,
    task_type: str,
    dataset: Any,
    epochs: int = 100,
    split: str | Mapping | None = None,
    category: str = USER_CATEGORY,
) -> BenchmarkTask:
    """A benchmark task from a user dataset; data objects are checked right away.

    ``dataset`` is a ``Data`` object, a list/``Dataset`` of graphs, a train/val/test dict of
    graph lists, or a callable returning one (zero-argument, or taking ``seed=``: then it is
    called with each run seed, so synthetic data is resampled per seed). Callables are
    checked when first loaded; a problem then fails the run with the same message.
    """
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"task name must be a non-empty string without '/', got {name!r}")
    _choice("task type", task_type, TASK_CLASSES)
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    split = _normalise_split(split)
    if isinstance(dataset, DATASET_OBJECTS) or not callable(dataset):
        check_dataset(dataset, task_type, split)  # cheap for data in hand; callables: at load
    return BenchmarkTask(name, category, task_type, epochs, dataset, split)


def load_source(task: BenchmarkTask, seed: int | None = None) -> Any:
    """The data of a user task (calling its loader), checked for what the task needs."""
    source = task.source
    if not isinstance(source, DATASET_OBJECTS) and callable(source):
        source = source(seed=seed) if task.seed_aware else source()
    check_dataset(source, task.task_type, task.split)
    # node and link tasks take the graph itself, whatever container it came in
    return source if task.task_type in GRAPH_TASKS else _first_graph(source)


# ---------------------------------------------------------------- the catalogue
def natural_task(dataset_cfg: dict) -> str | None:
    """The task type a dataset config chooses in its defaults list
    (``- override /task@_global_.task: <type>``), or None."""
    for entry in dataset_cfg.get("defaults") or []:
        if isinstance(entry, dict):
            for key, value in entry.items():
                if key.split()[-1].startswith("/task"):
                    return value
    return None


def config_tasks() -> list[BenchmarkTask]:
    """One task per dataset config x task type it serves, the default task first."""
    tasks = []
    for path in sorted((CONF_DIR / "dataset").glob("*.yaml")):
        cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
        served = list(cfg.get("task_types") or [])
        default = natural_task(cfg)
        order = ([default] if default in served else []) + [t for t in served if t != default]
        epochs = cfg.get("epochs") or {}
        for task_type in order:
            tasks.append(
                BenchmarkTask(
                    cfg["name"],
                    cfg["category"],
                    task_type,
                    epochs.get(task_type),
                    cfg["loader"],
                    cfg.get("split"),
                    config=cfg,
                )
            )
    return tasks


def all_tasks() -> list[BenchmarkTask]:
    return config_tasks() + [t for tasks in _REGISTERED.values() for t in tasks.values()]


def iter_benchmark_tasks(
    category: str | None = None, task_type: str | None = None
) -> Iterator[BenchmarkTask]:
    """Every benchmark task (dataset configs, then registered tasks), optionally filtered."""
    tasks = all_tasks()
    if category is not None:
        _choice("category", category, {t.category for t in tasks})
    if task_type is not None:
        _choice("task type", task_type, TASK_CLASSES)
    for task in tasks:
        if category in (None, task.category) and task_type in (None, task.task_type):
            yield task


def register_task(category: str, task: BenchmarkTask) -> BenchmarkTask:
    """Add a user task (from :func:`task_from_dataset`) to the catalogue under ``category``."""
    if not isinstance(task, BenchmarkTask):
        raise TypeError(
            f"register_task takes a BenchmarkTask (see task_from_dataset), "
            f"got {type(task).__name__}"
        )
    if not isinstance(category, str) or not category:
        raise ValueError(f"category must be a non-empty string, got {category!r}")
    taken = {t.key for t in all_tasks()}
    if task.key in taken:
        raise ValueError(
            f"a task {task.key!r} already exists; unregister it first or choose "
            "another name (run records and reports identify tasks by this key)"
        )
    task = replace(task, category=category)  # same uid: loaded data is shared
    _REGISTERED.setdefault(category, {})[task.key] = task
    return task


def unregister_task(category: str, name: str) -> None:
    """Remove the registered task(s) called ``name`` (or exactly ``name/task_type``)."""
    _choice("registered category", category, _REGISTERED)
    tasks = _REGISTERED[category]
    keys = [k for k, t in tasks.items() if name in (k, t.name)]
    if not keys:
        names = sorted({t.name for t in tasks.values()})
        raise ValueError(f"no task {name!r} registered under {category!r}; registered: {names}")
    for key in keys:
        del tasks[key]
    if not tasks:
        del _REGISTERED[category]


def list_datasets(category: str | None = None) -> pd.DataFrame:
    """The catalogue as a table: one row per (category, task type) with its datasets."""
    rows: dict[tuple[str, str], list[str]] = {}
    for task in iter_benchmark_tasks(category):
        rows.setdefault((task.category, task.task_type), []).append(task.name)
    table = pd.DataFrame(
        [
            {"category": c, "task_type": t, "n": len(names), "datasets": names}
            for (c, t), names in rows.items()
        ],
        columns=["category", "task_type", "n", "datasets"],
    )
    return table.sort_values(["category", "task_type"], kind="stable").reset_index(drop=True)


def list_task_types() -> pd.DataFrame:
    """The task types with their primary metric, its direction and how many datasets serve them."""
    served: dict[str, int] = {}
    for task in all_tasks():
        served[task.task_type] = served.get(task.task_type, 0) + 1
    rows = []
    for task_type in TASK_CLASSES:
        cls = task_class(task_type)
        rows.append(
            {
                "task_type": task_type,
                "primary_metric": cls.primary_metric,
                "direction": cls.direction,
                "datasets": served.get(task_type, 0),
                "module": f"{cls.__module__}.{cls.__qualname__}",
            }
        )
    return pd.DataFrame(
        rows, columns=["task_type", "primary_metric", "direction", "datasets", "module"]
    )


__all__ = [
    "BenchmarkTask",
    "check_dataset",
    "iter_benchmark_tasks",
    "list_datasets",
    "list_task_types",
    "register_task",
    "task_from_dataset",
    "unregister_task",
]
