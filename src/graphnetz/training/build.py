"""Build the model of a run from its resolved config: check compatibility, then adapt.

A model declares the task types it serves (:mod:`graphnetz.models.contract`); the check runs
before any data is loaded, so an incompatible pair costs nothing. The adapter is chosen by
the level of the task's data (:data:`graphnetz.models.adapters.ADAPTERS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf
from torch import nn

from graphnetz.models.adapters import adapt
from graphnetz.models.contract import capabilities

META_KEYS = ("name",)


def model_kwargs(model_cfg: DictConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The constructor arguments of the model config (``_target_`` included, ``name`` not)."""
    if isinstance(model_cfg, DictConfig):
        cfg = OmegaConf.to_container(model_cfg, resolve=True)
    else:
        cfg = dict(model_cfg)
    return {k: v for k, v in cfg.items() if k not in META_KEYS}


def model_class(model_cfg: DictConfig | Mapping[str, Any]) -> type:
    return get_class(model_kwargs(model_cfg)["_target_"])


def incompatibility(model_cfg: DictConfig | Mapping[str, Any], task_type: str) -> str | None:
    """Why this model cannot serve ``task_type``, or None when it can (or does not say)."""
    cls = model_class(model_cfg)
    caps = capabilities(cls)
    if caps.serves(task_type):
        return None
    name = model_cfg.get("name", cls.__name__)
    return (
        f"model {name!r} ({cls.__name__}) does not support task type {task_type!r}; "
        f"it supports {sorted(caps.task_types or ())}"
    )


def build_model(
    model_cfg: DictConfig | Mapping[str, Any],
    level: str,
    in_channels: int,
    out_channels: int,
    **extras: Any,
) -> nn.Module:
    """Instantiate the model at ``level`` with data-dependent sizes filled in."""
    kwargs = model_kwargs(model_cfg)
    return adapt(
        lambda i, o: instantiate(kwargs, in_channels=i, out_channels=o),
        model_class(model_cfg),
        level,
        in_channels,
        out_channels,
        kwargs.get("hidden_channels", 64),
        **extras,
    )
