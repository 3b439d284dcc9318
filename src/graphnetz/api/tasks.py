"""Benchmark tasks: the catalogue from ``conf/dataset`` and the tasks users make from data.

The catalogue has one :class:`BenchmarkTask` per dataset config x task type it serves (its
natural task first), under the category the config declares, plus the tasks users register
with :func:`register_task`. A user task is ``Task(name, task_type, loader, epochs=...)`` or
:func:`task_from_dataset`; its data is checked for what its task type needs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
from torch.utils.data import Dataset
from torch_geometric.data.data import BaseData

from graphnetz.api.registry import TASKS, register
from graphnetz.data.registry import catalogue
from graphnetz.data.splits import split_spec
from graphnetz.task_types import GRAPH, TASK_LEVELS
from graphnetz.tasks import TASK_CLASSES, task_class
from graphnetz.tasks.node_tasks import MASKS, require_attributes

GRAPH_TASKS = tuple(t for t, level in TASK_LEVELS.items() if level == GRAPH)
USER_CATEGORY = "custom"
DATASET_OBJECTS = (BaseData, Dataset, list, tuple, dict)
SPLIT_NAMES = ("train", "val", "test")


@dataclass(frozen=True, eq=False)  # eq: identity (data objects do not compare)
class BenchmarkTask:
    """One benchmark task: the dataset ``name`` served as ``task_type``.

    ``loader`` is the data: a ``Data`` object, a list/``Dataset`` of graphs, a
    ``{"train", "val", "test"}`` dict (or a 3-tuple) of graph collections, or a callable
    returning one of these, called as ``loader(root, seed=seed)`` with whichever of the two
    it takes (``root``: a first parameter named ``root`` or without a default; with
    ``seed``: once per run seed, else once and reused). Catalogue tasks keep
    their loader config here and name their YAML in ``conf``. ``split`` is the
    ``dataset.split`` value: None (the data's masks or canonical split) or ``"random"`` /
    ``{"type": "random", "train": 0.6, "val": 0.2}`` (a seeded split per run).
    """

    name: str
    task_type: str
    loader: Any
    epochs: int | None = 30  # None: the config names none (trainer.max_epochs must be given)
    split: dict | None = None
    category: str = USER_CATEGORY
    conf: str | None = field(default=None, repr=False)  # conf/dataset/<conf>.yaml

    def __post_init__(self) -> None:
        name, epochs = self.name, self.epochs
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"task name must be a non-empty string without '/', got {name!r}")
        _choice("task type", self.task_type, TASK_CLASSES)
        if epochs is not None and (type(epochs) is not int or epochs < 1):
            raise ValueError(f"task {name!r}: epochs must be a positive integer, got {epochs!r}")
        if self.conf is None and not (callable(self.loader) or is_data(self.loader)):
            raise TypeError(
                f"task {name!r}: the loader must be a Data object, a list/Dataset of graphs, "
                f"a train/val/test dict or a callable returning one; got {describe(self.loader)}"
            )
        object.__setattr__(self, "split", split_spec(self.split))

    @property
    def key(self) -> str:
        """The task's label in run records and reports: ``<dataset>/<task_type>``."""
        return f"{self.name}/{self.task_type}"

    @property
    def seeded(self) -> bool:
        """Whether the loader takes the run seed (the data is drawn anew per seed)."""
        return self.conf is None and any(p.name == "seed" for p in _parameters(self.loader))

    def config_node(self) -> dict[str, Any]:
        """The run config's ``dataset`` node of a user task (what its records store)."""
        tt = self.task_type
        return {
            "name": self.name,
            "category": self.category,
            "task_types": [tt],
            "epochs": {tt: self.epochs},
            "features": f"user dataset ({describe(self.loader)})",
            "split": self.split,
            "loader": {"given": describe(self.loader), "seeded": self.seeded},
        }

    def load(self, root: str, seed: int) -> Any:
        """The task's data for a run, checked for what the task type needs."""
        source = self.loader
        if callable(source) and not is_data(source):
            first = (_parameters(source) or [None])[0]
            positional = (
                inspect.Parameter.POSITIONAL_ONLY,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
            )
            # the reference's loader(root, *, seed); a first parameter with a default is a
            # root only by name (KarateClub(transform=None) takes none)
            takes_root = (
                first is not None
                and first.kind in positional
                and first.name != "seed"
                and (first.name == "root" or first.default is inspect.Parameter.empty)
            )
            args = [root] if takes_root else []
            source = source(*args, **({"seed": seed} if self.seeded else {}))
        if isinstance(source, tuple) and len(source) == 3 and not isinstance(source[0], BaseData):
            source = dict(zip(SPLIT_NAMES, source, strict=True))  # (train, val, test)
        check_dataset(source, self.task_type, self.split)
        return source if self.task_type in GRAPH_TASKS else _first_graph(source)


#: the reference package's name for a user task: ``Task(name, task_type, loader, epochs=30)``
Task = BenchmarkTask


def is_data(obj: Any) -> bool:
    return isinstance(obj, DATASET_OBJECTS)


def _parameters(loader: Any) -> list[inspect.Parameter]:
    if is_data(loader) or not callable(loader):
        return []
    try:
        return list(inspect.signature(loader).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature
        return []


def describe(obj: Any) -> str:
    """``module.qualname`` of a loader function/class, or of a data object's type."""
    named = obj if callable(obj) and not is_data(obj) else type(obj)
    return f"{getattr(named, '__module__', '?')}.{getattr(named, '__qualname__', repr(named))}"


# ---------------------------------------------------------------- dataset checks
def _first_graph(data: Any) -> Any:
    """The graph of a one-graph dataset (a ``Data`` object, or a Dataset/list holding it)."""
    return data if isinstance(data, BaseData) else data[0]


def check_dataset(data: Any, task_type: str, split: dict | None = None) -> None:
    """Raise ``ValueError`` naming what ``data`` lacks for ``task_type``."""
    if not is_data(data):
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
            missing = [s for s in SPLIT_NAMES if s not in data]
            if missing:
                raise ValueError(
                    f"a canonical graph split needs keys {list(SPLIT_NAMES)}; missing {missing}"
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


def task_from_dataset(
    name: str,
    task_type: str,
    dataset: Any,
    *,
    epochs: int = 30,
    split: str | Mapping | None = None,
    category: str = USER_CATEGORY,
) -> BenchmarkTask:
    """A benchmark task from a dataset in hand (or a loader, see :class:`BenchmarkTask`);
    data objects are checked right away, loaders when first called (failing the run)."""
    task = BenchmarkTask(name, task_type, dataset, epochs, split, category)
    if is_data(dataset):
        check_dataset(dataset, task_type, task.split)
    return task


# ---------------------------------------------------------------- the catalogue
def config_tasks() -> list[BenchmarkTask]:
    """One task per dataset config x task type it serves, the default task first."""
    tasks = []
    for entry in catalogue():
        served, default = list(entry.task_types), entry.natural_task
        order = ([default] if default in served else []) + [t for t in served if t != default]
        for task_type in order:
            tasks.append(
                BenchmarkTask(
                    entry.name,
                    task_type,
                    dict(entry.loader),
                    entry.epochs.get(task_type),
                    entry.split,
                    entry.category,
                    conf=entry.config,
                )
            )
    return tasks


def iter_benchmark_tasks(
    category: str | None = None, task_type: str | None = None
) -> list[BenchmarkTask]:
    """Every benchmark task (dataset configs, then registered tasks), optionally filtered."""
    tasks = config_tasks() + list(TASKS.values())
    if category is not None:
        _choice("category", category, {t.category for t in tasks})
    if task_type is not None:
        _choice("task type", task_type, TASK_CLASSES)
    return [t for t in tasks if category in (None, t.category) and task_type in (None, t.task_type)]


def _choice(what: str, value: Any, valid) -> None:
    if value not in valid:
        raise ValueError(f"unknown {what} {value!r}; valid: {sorted(valid)}")


def register_task(category: str, task: BenchmarkTask) -> BenchmarkTask:
    """Add a user task to the catalogue under ``category`` (``run_benchmark(category)``
    then includes it); a task key the catalogue already has is refused."""
    if not isinstance(task, BenchmarkTask):
        raise TypeError(
            f"register_task takes a Task (see task_from_dataset), got {type(task).__name__}"
        )
    if not isinstance(category, str) or not category:
        raise ValueError(f"category must be a non-empty string, got {category!r}")
    if task.key in {t.key for t in config_tasks()}:
        raise ValueError(
            f"a task {task.key!r} already exists in conf/dataset; choose another name "
            "(run records and reports identify tasks by this key)"
        )
    return register(TASKS, task.key, replace(task, category=category), same=lambda *_: False)


def unregister_task(category: str, name: str) -> BenchmarkTask | None:
    """Remove the task(s) called ``name`` (or exactly ``name/task_type``) from ``category``;
    returns the first removed, or None when there is none (as the reference package does,
    so a test's tearDown may call it unconditionally)."""
    keys = [k for k, t in TASKS.items() if t.category == category and name in (k, t.name)]
    removed = [TASKS.pop(key) for key in keys]
    return removed[0] if removed else None


class BenchmarkTasks(Mapping):
    """The reference package's ``BENCHMARK_TASKS``: ``category -> task_type -> [Task]``,
    read from the catalogue (dataset configs and registered tasks) at each access. It is a
    view: add tasks with :func:`register_task`, not by editing the lists."""

    def _tree(self) -> dict[str, dict[str, list[BenchmarkTask]]]:
        tree: dict[str, dict[str, list[BenchmarkTask]]] = {}
        for task in iter_benchmark_tasks():
            tree.setdefault(task.category, {}).setdefault(task.task_type, []).append(task)
        return tree

    def __getitem__(self, category: str) -> dict[str, list[BenchmarkTask]]:
        return self._tree()[category]

    def __iter__(self):
        return iter(self._tree())

    def __len__(self) -> int:
        return len(self._tree())

    def __repr__(self) -> str:
        return f"BENCHMARK_TASKS({self._tree()!r})"


BENCHMARK_TASKS = BenchmarkTasks()


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
    for task in iter_benchmark_tasks():
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
    "BENCHMARK_TASKS",
    "BenchmarkTask",
    "BenchmarkTasks",
    "Task",
    "check_dataset",
    "iter_benchmark_tasks",
    "list_datasets",
    "list_task_types",
    "register_task",
    "task_from_dataset",
    "unregister_task",
]
