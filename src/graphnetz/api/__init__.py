"""The Python API: the benchmark catalogue, user tasks and models, ``run_benchmark``."""

from graphnetz.api.benchmark import BenchmarkFailed, run_benchmark
from graphnetz.api.models import (
    ModelSpec,
    _multi_task_factory,
    register_model,
    registered_models,
    unregister_model,
    wrap_encoder,
)
from graphnetz.api.refused import SearchSpace, plot_benchmark
from graphnetz.api.tasks import (
    BENCHMARK_TASKS,
    BenchmarkTask,
    Task,
    check_dataset,
    iter_benchmark_tasks,
    list_datasets,
    register_task,
    task_from_dataset,
    unregister_task,
)

__all__ = [
    "BENCHMARK_TASKS",
    "BenchmarkFailed",
    "BenchmarkTask",
    "ModelSpec",
    "SearchSpace",
    "Task",
    "_multi_task_factory",
    "check_dataset",
    "iter_benchmark_tasks",
    "list_datasets",
    "plot_benchmark",
    "register_model",
    "register_task",
    "registered_models",
    "run_benchmark",
    "task_from_dataset",
    "unregister_model",
    "unregister_task",
    "wrap_encoder",
]
