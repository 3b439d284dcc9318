"""The reference package's ``graphnetz.benchmark`` names, for code written against it::

    from graphnetz.benchmark import Task, register_model, _multi_task_factory

They are the API's own objects (:mod:`graphnetz.api`), not copies.
"""

from graphnetz.api import (
    BenchmarkFailed,
    BenchmarkTask,
    ModelSpec,
    Task,
    _multi_task_factory,
    iter_benchmark_tasks,
    register_model,
    register_task,
    run_benchmark,
    task_from_dataset,
    unregister_task,
)
from graphnetz.report import BenchmarkReport
from graphnetz.task_types import TASK_TYPES

__all__ = [
    "TASK_TYPES",
    "BenchmarkFailed",
    "BenchmarkReport",
    "BenchmarkTask",
    "ModelSpec",
    "Task",
    "_multi_task_factory",
    "iter_benchmark_tasks",
    "register_model",
    "register_task",
    "run_benchmark",
    "task_from_dataset",
    "unregister_task",
]
