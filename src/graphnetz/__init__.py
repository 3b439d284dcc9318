"""GraphNetz: benchmarking graph neural networks honestly.

    from graphnetz import GCN, register_model, run_benchmark
    report = run_benchmark("social", {"GCN": GCN, "Mine": MyGNN}, seeds=range(10))

The API is imported on first use, so ``import graphnetz`` (and its CLIs) stay light.
"""

from __future__ import annotations

import importlib
from typing import Any

from graphnetz import launch as _launch  # noqa: F401  (records the launch directory first)

__version__ = "0.1.0"

_EXPORTS = {
    "run_benchmark": "graphnetz.api",
    "register_model": "graphnetz.api",
    "unregister_model": "graphnetz.api",
    "task_from_dataset": "graphnetz.api",
    "register_task": "graphnetz.api",
    "unregister_task": "graphnetz.api",
    "iter_benchmark_tasks": "graphnetz.api",
    "list_datasets": "graphnetz.api",
    "wrap_encoder": "graphnetz.api",
    "BenchmarkTask": "graphnetz.api",
    "BenchmarkFailed": "graphnetz.api",
    "Task": "graphnetz.api",
    "ModelSpec": "graphnetz.api",
    "BENCHMARK_TASKS": "graphnetz.api",
    "SearchSpace": "graphnetz.api",  # refused on use: names what to use instead
    "plot_benchmark": "graphnetz.api",  # refused on use: names what to use instead
    "BenchmarkReport": "graphnetz.report",
    # our encoders, under the reference package's names
    "GCN": "graphnetz.models",
    "GAT": "graphnetz.models",
    "GIN": "graphnetz.models",
    "GraphSAGE": "graphnetz.models",
    "GraphTransformer": "graphnetz.models",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    if name == "benchmark":  # the reference package's module, by attribute too
        return importlib.import_module("graphnetz.benchmark")
    raise AttributeError(f"module 'graphnetz' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
