"""The Python API: the benchmark catalogue, user tasks and models, ``run_benchmark``."""

from graphnetz.api.benchmark import run_benchmark
from graphnetz.api.models import (
    ModelSpec,
    register_model,
    registered_models,
    unregister_model,
    wrap_encoder,
)
from graphnetz.api.tasks import (
    BenchmarkTask,
    check_dataset,
    iter_benchmark_tasks,
    list_datasets,
    register_task,
    task_from_dataset,
    unregister_task,
)

__all__ = [
    "BenchmarkTask",
    "ModelSpec",
    "check_dataset",
    "iter_benchmark_tasks",
    "list_datasets",
    "register_model",
    "register_task",
    "registered_models",
    "run_benchmark",
    "task_from_dataset",
    "unregister_model",
    "unregister_task",
    "wrap_encoder",
]
