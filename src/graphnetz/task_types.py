"""The task types GraphNetz runs, and the level at which each one's model works.

This is the one declared list: ``conf/task/<type>.yaml``, the task classes, the model
adapters and the models' ``task_types`` declarations all use these names. The level decides
how a node encoder enters the task (see :mod:`graphnetz.models.adapters`); link prediction on
a knowledge graph works at the ``relational_link`` level, decided from the data.
"""

from __future__ import annotations

NODE, GRAPH, LINK, RELATIONAL_LINK = "node", "graph", "link", "relational_link"
LEVELS = (NODE, GRAPH, LINK, RELATIONAL_LINK)

#: task type -> the level of its model's output (node rows, graph rows, node pairs)
TASK_LEVELS: dict[str, str] = {
    "node_cls": NODE,
    "ml_node_cls": NODE,
    "graph_cls": GRAPH,
    "ml_graph_cls": GRAPH,
    "graph_reg": GRAPH,
    "link_pred": LINK,
}
TASK_TYPES: tuple[str, ...] = tuple(TASK_LEVELS)
#: Task types whose datasets get a statistics row (records' ``dataset_facts``, the report's
#: Datasets section): the multi-label study describes its datasets.
DESCRIBED_TASK_TYPES: tuple[str, ...] = ("ml_node_cls",)


def check_task_type(task_type: object) -> str:
    """``task_type`` if it is a known task type; else a ValueError naming the valid ones."""
    if task_type not in TASK_LEVELS:
        raise ValueError(f"unknown task type {task_type!r}; valid: {list(TASK_TYPES)}")
    return str(task_type)
