"""The API's one registry: name -> user model, key -> user task, as GraphGym keeps them.

Two dicts and one :func:`register` helper. :func:`graphnetz.api.register_model` and
:func:`graphnetz.api.register_task` fill them; ``run_benchmark`` reads them. Configs never
point here: user objects reach a run as built objects
(:func:`graphnetz.training.run.run_experiment`'s ``load_data`` and ``model_factory``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: model name -> :class:`graphnetz.api.models.ModelSpec`
MODELS: dict[str, Any] = {}
#: task key (``<name>/<task_type>``) -> :class:`graphnetz.api.tasks.BenchmarkTask`
TASKS: dict[str, Any] = {}


def register(
    table: dict[str, Any],
    key: str,
    value: Any,
    same: Callable[[Any, Any], bool] = lambda old, new: old == new,
) -> Any:
    """Put ``value`` under ``key``; a different value already there (by ``same``) is refused,
    since run records and reports identify models and tasks by these names."""
    if key in table and not same(table[key], value):
        raise ValueError(
            f"{key!r} is already registered as another {type(value).__name__}; "
            "unregister it first or choose another name"
        )
    table[key] = value
    return value
