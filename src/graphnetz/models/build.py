"""Build the model of a run from its config: check compatibility, then wrap for the task.

A model declares the task types it can serve with a class attribute ``task_types``.
Node encoders serve graph- and link-level tasks through adapters (see ``adapters``);
the check runs before any data is loaded, so an incompatible pair costs nothing.
"""

from __future__ import annotations

from typing import Any

from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf
from torch import nn

META_KEYS = ("name",)


def model_kwargs(model_cfg: DictConfig | dict) -> dict[str, Any]:
    cfg = (
        OmegaConf.to_container(model_cfg, resolve=True)
        if isinstance(model_cfg, DictConfig)
        else dict(model_cfg)
    )
    return {k: v for k, v in cfg.items() if k not in META_KEYS}


def model_class(model_cfg) -> type:
    return get_class(model_kwargs(model_cfg)["_target_"])


def incompatibility(model_cfg, task_type: str) -> str | None:
    """Why this model cannot serve ``task_type``, or None when it can."""
    cls = model_class(model_cfg)
    supported = getattr(cls, "task_types", None)
    if supported is None:
        return None  # undeclared: let the run try, a failure is recorded as such
    if task_type not in supported:
        name = model_cfg.get("name", cls.__name__)
        return (
            f"model {name!r} ({cls.__name__}) does not support task type {task_type!r}; "
            f"it supports {sorted(supported)}"
        )
    return None


def default_dropout(task_type: str) -> float:
    """What ``model.dropout: null`` means: the task type's default."""
    from graphnetz.tasks import task_class

    return task_class(task_type).default_dropout


def build_model(
    model_cfg, task_type: str, in_channels: int, out_channels: int, **extras: Any
) -> nn.Module:
    """Instantiate the model for ``task_type`` with data-dependent sizes filled in."""
    from graphnetz.models.adapters import wrap_for_task

    kwargs = model_kwargs(model_cfg)
    if "dropout" in kwargs and kwargs["dropout"] is None:
        kwargs["dropout"] = default_dropout(task_type)
    return wrap_for_task(
        lambda i, o: instantiate(kwargs, in_channels=i, out_channels=o),
        model_class(model_cfg),
        task_type,
        in_channels,
        out_channels,
        kwargs.get("hidden_channels", 64),
        **extras,
    )
