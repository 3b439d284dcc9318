"""The reference package's ``graphnetz.benchmark`` names, for code written against it::

    from graphnetz.benchmark import Task, register_model, _multi_task_factory

They are the API's own objects (:mod:`graphnetz.api`), not copies. ``SearchSpace`` and
``plot_benchmark`` have no equivalent here: using them raises an error that names what to
use instead (docs/python_api.md lists every difference).
"""

from graphnetz.api import (
    BENCHMARK_TASKS,
    BenchmarkFailed,
    BenchmarkTask,
    ModelSpec,
    SearchSpace,
    Task,
    _multi_task_factory,
    iter_benchmark_tasks,
    plot_benchmark,
    register_model,
    register_task,
    run_benchmark,
    task_from_dataset,
    unregister_task,
)
from graphnetz.report import BenchmarkReport
from graphnetz.task_types import TASK_TYPES

__all__ = [
    "BENCHMARK_TASKS",
    "TASK_TYPES",
    "BenchmarkFailed",
    "BenchmarkReport",
    "BenchmarkTask",
    "ModelSpec",
    "SearchSpace",
    "Task",
    "_multi_task_factory",
    "iter_benchmark_tasks",
    "plot_benchmark",
    "register_model",
    "register_task",
    "run_benchmark",
    "task_from_dataset",
    "unregister_task",
]
