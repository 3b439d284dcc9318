"""Task types as LightningModules, and the registry mapping task-type names to them."""

from __future__ import annotations

from hydra.utils import get_class

from graphnetz.tasks.base import GraphTask, TaskData
from graphnetz.tasks.node_tasks import MultiLabelNodeClassificationTask, NodeClassificationTask

# task type -> LightningModule class path; conf/task/<type>.yaml points at the same class.
TASK_CLASSES: dict[str, str] = {
    "node_cls": "graphnetz.tasks.node_tasks.NodeClassificationTask",
    "ml_node_cls": "graphnetz.tasks.node_tasks.MultiLabelNodeClassificationTask",
    "graph_cls": "graphnetz.tasks.graph_tasks.GraphClassificationTask",
    "graph_reg": "graphnetz.tasks.graph_tasks.GraphRegressionTask",
    "link_pred": "graphnetz.tasks.link_tasks.LinkPredictionTask",
}


def task_class(task_type: str) -> type[GraphTask]:
    if task_type not in TASK_CLASSES:
        raise ValueError(f"unknown task type {task_type!r}; valid: {sorted(TASK_CLASSES)}")
    return get_class(TASK_CLASSES[task_type])


__all__ = [
    "GraphTask",
    "MultiLabelNodeClassificationTask",
    "NodeClassificationTask",
    "TASK_CLASSES",
    "TaskData",
    "task_class",
]
