"""Build the model of a run from its resolved config: check compatibility, then adapt.

A model declares the task types it serves (:mod:`graphnetz.models.contract`); the check runs
before any data is loaded, so an incompatible pair costs nothing. The adapter is chosen by
the level of the task's data (:data:`graphnetz.models.adapters.ADAPTERS`). A model built
by Python code (the API's user models) comes as a :class:`ModelFactory` instead of the
config's ``_target_``; the same check and adapters apply to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf
from torch import nn

from graphnetz.models.adapters import adapt
from graphnetz.models.contract import capabilities

META_KEYS = ("name",)


@dataclass(frozen=True)
class ModelFactory:
    """A model built by code: ``build(in_channels, hidden_channels, out_channels)`` makes a
    ``cls``, which serves ``task_types`` (None: what ``cls`` itself declares)."""

    cls: type
    build: Callable[[int, int, int], nn.Module]
    task_types: frozenset[str] | None = None


def model_kwargs(model_cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The constructor arguments of the model config (``_target_`` included, ``name`` not)."""
    if isinstance(model_cfg, DictConfig):
        cfg = OmegaConf.to_container(model_cfg, resolve=True)
    else:
        cfg = dict(model_cfg)
    return {k: v for k, v in cfg.items() if k not in META_KEYS}


def model_class(model_cfg: DictConfig | Mapping[str, Any]) -> type:
    return get_class(model_kwargs(model_cfg)["_target_"])


def incompatibility(
    model_cfg: DictConfig | Mapping[str, Any],
    task_type: str,
    factory: ModelFactory | None = None,
) -> str | None:
    """Why this model cannot serve ``task_type``, or None when it can (or does not say)."""
    cls = model_class(model_cfg) if factory is None else factory.cls
    served = capabilities(cls).task_types
    if factory is not None and factory.task_types is not None:
        served = factory.task_types
    if served is None or task_type in served:
        return None
    name = model_cfg.get("name", cls.__name__)
    return (
        f"model {name!r} ({cls.__name__}) does not support task type {task_type!r}; "
        f"it supports {sorted(served)}"
    )


def build_model(
    model_cfg: DictConfig | Mapping[str, Any],
    level: str,
    in_channels: int,
    out_channels: int,
    factory: ModelFactory | None = None,
    **extras: Any,
) -> nn.Module:
    """Instantiate the model at ``level`` with data-dependent sizes filled in."""
    kwargs = model_kwargs(model_cfg)
    hidden = kwargs.get("hidden_channels", 64)
    if factory is None:
        cls = model_class(model_cfg)
        make = lambda i, o: instantiate(kwargs, in_channels=i, out_channels=o)  # noqa: E731
    else:  # built by code; the config records its width and hyperparameters
        cls = factory.cls
        make = lambda i, o: factory.build(i, hidden, o)  # noqa: E731
    return adapt(make, cls, level, in_channels, out_channels, hidden, **extras)
