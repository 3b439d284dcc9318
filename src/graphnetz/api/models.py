"""User models: three ways to declare what a model can serve.

(a) ``@register_model(task_type="node_cls")`` (or a set of task types) on a class;
(b) a class with a ``task_types = {...}`` attribute, passed as it is;
(c) an inline tuple ``(cls, task_type, factory)`` with ``factory(in, hidden, out) -> Module``.

Classes are built as ``cls(in_channels=, hidden_channels=, out_channels=, **hyperparameters)``.
A model is a node encoder (``forward(x, edge_index) -> [N, out]``) unless the class sets
``graph_level = True``; the task adapters (:func:`graphnetz.models.adapters.adapt`)
give node encoders their pooling or link head, in the pipeline and in :func:`wrap_encoder`.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from hydra.utils import get_class
from omegaconf import OmegaConf
from torch import nn

from graphnetz.config_dir import CONF_DIR
from graphnetz.models.adapters import adapt
from graphnetz.task_types import RELATIONAL_LINK, TASK_LEVELS
from graphnetz.tasks import TASK_CLASSES

DEFAULT_HIDDEN = 64
_SIZES = ("in_channels", "hidden_channels", "out_channels")
_SCALARS = (bool, int, float, str, type(None))

_uids = itertools.count()
_REGISTERED: dict[str, ModelSpec] = {}  # name -> spec; what @register_model added


@dataclass(frozen=True)
class ModelSpec:
    """A user model: its class, the task types it serves and how to build it."""

    name: str
    cls: type
    task_types: frozenset[str]
    factory: Callable[..., nn.Module] | None = None  # (in, hidden, out, **hp) -> Module
    uid: int = field(default_factory=lambda: next(_uids), compare=False)

    @property
    def graph_level(self) -> bool:
        return bool(getattr(self.cls, "graph_level", False))

    @property
    def defined_in(self) -> str:
        return f"{self.cls.__module__}.{self.cls.__qualname__}"

    def build(
        self, in_channels: int, hidden_channels: int, out_channels: int, **hyperparameters: Any
    ) -> nn.Module:
        if self.factory is not None:
            return self.factory(in_channels, hidden_channels, out_channels, **hyperparameters)
        return self.cls(
            in_channels=in_channels,
            hidden_channels=hidden_channels,
            out_channels=out_channels,
            **hyperparameters,
        )

    def hyperparameters(self) -> dict[str, Any]:
        """Scalar keyword defaults of the constructor (overridable as ``model.<name>=``)."""
        if self.factory is not None:
            return {"hidden_channels": DEFAULT_HIDDEN}
        try:
            params = inspect.signature(self.cls).parameters.values()
        except (TypeError, ValueError):  # no introspectable signature: sizes only
            return {"hidden_channels": DEFAULT_HIDDEN}
        found = {
            p.name: p.default
            for p in params
            if p.name not in ("in_channels", "out_channels")
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.default is not p.empty
            and isinstance(p.default, _SCALARS)
        }
        return {"hidden_channels": DEFAULT_HIDDEN, **found}


def _task_types(value: Any, owner: str) -> frozenset[str]:
    types = {value} if isinstance(value, str) else value
    if not isinstance(types, Iterable) or not types:
        raise ValueError(
            f"{owner}: task_type must be a task type or a set of them; valid: "
            f"{sorted(TASK_CLASSES)}; got {value!r}"
        )
    unknown = sorted(str(t) for t in types if t not in TASK_CLASSES)
    if unknown:
        raise ValueError(f"{owner}: unknown task type(s) {unknown}; valid: {sorted(TASK_CLASSES)}")
    return frozenset(types)


def register_model(
    cls: type | None = None, *, task_type: str | Iterable[str], name: str | None = None
):
    """Register a model class for ``task_type`` (one or a set); usable as a decorator.

    ``@register_model(task_type={"node_cls", "link_pred"})`` keeps the class unchanged and
    makes it usable by name (``models=["MyGNN"]``) or by class in :func:`run_benchmark`.
    """

    def decorate(klass: type) -> type:
        if not isinstance(klass, type):
            raise TypeError(f"register_model decorates a class, got {klass!r}")
        key = name or klass.__name__
        _check_name(key)
        if key in _REGISTERED and _REGISTERED[key].cls is not klass:
            raise ValueError(
                f"a different model is already registered as {key!r}; "
                "pass name=... or unregister_model it first"
            )
        _REGISTERED[key] = ModelSpec(key, klass, _task_types(task_type, key))
        return klass

    return decorate if cls is None else decorate(cls)


def unregister_model(name: str) -> None:
    if name not in _REGISTERED:
        raise ValueError(f"no model registered as {name!r}; registered: {sorted(_REGISTERED)}")
    del _REGISTERED[name]


def registered_models() -> dict[str, ModelSpec]:
    return dict(_REGISTERED)


def conf_models() -> dict[str, str]:
    """conf/model YAML name -> the ``_target_`` it builds."""
    return {
        p.stem: str(OmegaConf.load(p).get("_target_"))
        for p in sorted((CONF_DIR / "model").glob("*.yaml"))
    }


def list_models() -> pd.DataFrame:
    """conf/model YAMLs and registered models with the task types each serves."""
    rows = []
    for name, target in conf_models().items():
        try:
            types = getattr(get_class(target), "task_types", None)
            served = ", ".join(sorted(types)) if types is not None else "undeclared"
        except Exception as err:  # listing must not fail on one model's missing dependency
            served = f"unavailable ({type(err).__name__})"
        rows.append({"name": name, "kind": "conf/model", "builds": target, "task_types": served})
    for name, spec in _REGISTERED.items():
        rows.append(
            {
                "name": name,
                "kind": "registered",
                "builds": spec.defined_in,
                "task_types": ", ".join(sorted(spec.task_types)),
            }
        )
    return pd.DataFrame(rows, columns=["name", "kind", "builds", "task_types"])


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"model name must be a non-empty string without '/', got {name!r}")


def model_spec(name: str, value: Any) -> ModelSpec:
    """A user model in any of the three forms (a string naming a registered model too)."""
    _check_name(name)
    if isinstance(value, str):
        if value not in _REGISTERED:
            raise ValueError(f"no model registered as {value!r}; registered: {sorted(_REGISTERED)}")
        return _renamed(_REGISTERED[value], name)
    if isinstance(value, tuple):
        if len(value) != 3 or not isinstance(value[0], type) or not callable(value[2]):
            raise ValueError(
                f"model {name!r}: an inline model is (cls, task_type, factory) "
                f"with factory(in, hidden, out) -> Module; got {value!r}"
            )
        cls, task_type, factory = value
        return ModelSpec(name, cls, _task_types(task_type, name), factory)
    if isinstance(value, type):
        for spec in _REGISTERED.values():
            if spec.cls is value:
                return _renamed(spec, name)
        declared = getattr(value, "task_types", None)
        if declared is None:
            raise ValueError(
                f"model {name!r} ({value.__name__}) does not say which task types it serves: "
                "decorate it with @register_model(task_type=...), give it a class attribute "
                "task_types = {...}, or pass (cls, task_type, factory)"
            )
        return ModelSpec(name, value, _task_types(declared, name))
    raise TypeError(
        f"model {name!r}: expected a conf/model name, a registered name, a class or "
        f"a (cls, task_type, factory) tuple; got {type(value).__name__}"
    )


def _renamed(spec: ModelSpec, name: str) -> ModelSpec:
    return spec if spec.name == name else ModelSpec(name, spec.cls, spec.task_types, spec.factory)


def proxy_class(spec: ModelSpec, key: str) -> type:
    """The class a run's ``model._target_`` names: it carries the spec's ``task_types`` (read
    by the compatibility check before data is loaded) and builds the user's module."""

    def __new__(
        cls,
        in_channels: int,
        out_channels: int,
        hidden_channels: int = DEFAULT_HIDDEN,
        defined_in: str | None = None,
        **hyperparameters: Any,
    ) -> nn.Module:
        return spec.build(in_channels, hidden_channels, out_channels, **hyperparameters)

    return type(
        spec.cls.__name__,
        (),
        {
            "__new__": __new__,
            "__module__": "graphnetz.api.registry",
            "__qualname__": key,
            "task_types": spec.task_types,
            "graph_level": spec.graph_level,
            "__doc__": f"Builds {spec.defined_in} for the model {spec.name!r}.",
        },
    )


def wrap_encoder(
    encoder: type | Callable[..., nn.Module],
    task_type: str,
    in_channels: int,
    out_channels: int,
    hidden_channels: int = DEFAULT_HIDDEN,
    **extras: Any,
) -> nn.Module:
    """A model for ``task_type`` from a node encoder, with the adapter the pipeline uses.

    ``encoder`` is a class (built as ``cls(in_channels=, hidden_channels=, out_channels=)``)
    or a ``factory(in, hidden, out) -> Module``. Node tasks get the encoder with
    ``out_channels`` outputs; graph tasks a mean-pool + MLP head, link prediction a
    dot-product decoder (DistMult when ``num_relations``/``num_nodes`` are given).
    """
    _task_types(task_type, "wrap_encoder")
    if isinstance(encoder, type):
        spec = ModelSpec(encoder.__name__, encoder, frozenset(TASK_CLASSES))
    elif callable(encoder):
        spec = ModelSpec(
            getattr(encoder, "__name__", "factory"), type(encoder), frozenset(TASK_CLASSES), encoder
        )
    else:
        raise TypeError(
            f"wrap_encoder takes an encoder class or a factory(in, hidden, out); "
            f"got {type(encoder).__name__}"
        )
    cls = encoder if isinstance(encoder, type) else nn.Module
    level = RELATIONAL_LINK if extras.get("num_relations") is not None else TASK_LEVELS[task_type]
    return adapt(
        lambda i, o: spec.build(i, hidden_channels, o),
        cls,
        level,
        in_channels,
        out_channels,
        hidden_channels,
        **extras,
    )


__all__ = [
    "ModelSpec",
    "conf_models",
    "list_models",
    "model_spec",
    "register_model",
    "registered_models",
    "unregister_model",
    "wrap_encoder",
]
