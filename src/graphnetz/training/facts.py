"""Facts about the data a run trained on, measured once at training time for its record.

The report's Datasets section reads them from the records (``analyze.py`` never reloads a
dataset for records that carry them):

- ``statistics``: :func:`graphnetz.analysis.dataset_statistics` of the graph (multi-label
  node tasks only; ``None`` otherwise);
- ``chance``: the primary metric of a model that learned nothing from the data, on the
  run's test split (``{"metric", "split", "rule", "value"}``; ``None`` where the task type
  defines none);
- ``seeded_loader``: whether the loader draws the graph from the run seed (a generated
  graph differs per run, so its statistics are those of one seed); a dataset handed in by
  Python code has no ``_target_`` and says so itself (``loader.seeded``).
"""

from __future__ import annotations

from typing import Any

from graphnetz.analysis.statistics import dataset_statistics
from graphnetz.data.loading import accepts_seed
from graphnetz.task_types import DESCRIBED_TASK_TYPES
from graphnetz.tasks.base import GraphTask, TaskData


def dataset_facts(
    task_cls: type[GraphTask], data: TaskData, name: str, loader_cfg: Any
) -> dict[str, Any]:
    """The ``dataset_facts`` of a run record, from the data the task prepared."""
    graph = data.graph
    described = task_cls.task_type in DESCRIBED_TASK_TYPES and graph is not None
    return {
        "statistics": dataset_statistics(graph, name) if described else None,
        "chance": task_cls.chance_level(data),
        "seeded_loader": (
            accepts_seed(loader_cfg) if "_target_" in loader_cfg else bool(loader_cfg.get("seeded"))
        ),
    }
