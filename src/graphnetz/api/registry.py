"""What run configs point at to reach user objects, so ``run_experiment`` stays the one path.

While :func:`graphnetz.api.run_benchmark` runs, user datasets and models are *bound* here
under keys (``dataset_<n>``, ``model_<n>``). A user dataset's config says
``loader: {_target_: graphnetz.api.registry.registered_dataset, key: dataset_3}`` (or
``registered_seeded_dataset`` for loaders taking ``seed``, so the pipeline's per-seed
caching applies); a user model's says ``_target_: graphnetz.api.registry.model_5``, a class
carrying the model's ``task_types``. Bindings are removed when the benchmark ends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from graphnetz.api.tasks import load_source

_BOUND: dict[str, Any] = {}


@contextmanager
def bound(objects: Mapping[str, Any]) -> Iterator[None]:
    """Make ``objects`` reachable by key for the duration of the block."""
    clash = sorted(set(objects) & set(_BOUND))
    if clash:
        raise RuntimeError(f"registry keys already bound: {clash}")
    _BOUND.update(objects)
    try:
        yield
    finally:
        for key in objects:
            _BOUND.pop(key, None)


def lookup(key: str) -> Any:
    if key not in _BOUND:
        raise LookupError(
            f"{key!r} is not bound: user datasets and models are reachable only "
            f"while run_benchmark runs them (bound now: {sorted(_BOUND)})"
        )
    return _BOUND[key]


def registered_dataset(key: str, root: Any = None, mirror: Any = None) -> Any:
    """Loader target of a user dataset that does not depend on the seed (loaded once)."""
    return load_source(lookup(key))


def registered_seeded_dataset(
    key: str, root: Any = None, mirror: Any = None, seed: int | None = None
) -> Any:
    """Loader target of a user dataset built per run seed (``source(seed=seed)``)."""
    return load_source(lookup(key), seed)


def __getattr__(name: str) -> type:
    # ``model._target_: graphnetz.api.registry.model_<n>`` resolves to the bound proxy class
    if name.startswith("model_") and name in _BOUND:
        return _BOUND[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
