"""Task types as modules with Lightning's hooks, and the registry mapping task-type names to them."""

from __future__ import annotations

from graphnetz.task_types import check_task_type
from graphnetz.tasks.base import GraphTask, TaskData
from graphnetz.tasks.graph_tasks import (
    GraphClassificationTask,
    GraphRegressionTask,
    MultiLabelGraphClassificationTask,
)
from graphnetz.tasks.link_tasks import LinkPredictionTask
from graphnetz.tasks.node_tasks import MultiLabelNodeClassificationTask, NodeClassificationTask

#: task type -> task class; conf/task/<type>.yaml's ``_target_`` names the same class.
TASK_CLASSES: dict[str, type[GraphTask]] = {
    cls.task_type: cls
    for cls in (
        NodeClassificationTask,
        MultiLabelNodeClassificationTask,
        GraphClassificationTask,
        MultiLabelGraphClassificationTask,
        GraphRegressionTask,
        LinkPredictionTask,
    )
}


def task_class(task_type: str) -> type[GraphTask]:
    return TASK_CLASSES[check_task_type(task_type)]


__all__ = [
    "TASK_CLASSES",
    "GraphClassificationTask",
    "GraphRegressionTask",
    "GraphTask",
    "LinkPredictionTask",
    "MultiLabelGraphClassificationTask",
    "MultiLabelNodeClassificationTask",
    "NodeClassificationTask",
    "TaskData",
    "task_class",
]
