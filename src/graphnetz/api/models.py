"""User models: a class (or factory) and the task types it serves, as a :class:`ModelSpec`.

The forms of the reference package, all accepted by ``run_benchmark(models={...})``:

- ``@register_model(task_type={"node_cls"})`` on a class (then usable by name too);
- a class with a ``task_types = {...}`` attribute, passed as it is;
- an inline tuple ``(cls, task_type)`` or ``(cls, task_type, factory)``;
- ``register_model(Enc, task_type={...}, factory=_multi_task_factory(Enc))``.

A model is built as ``cls(in_channels, hidden_channels, out_channels, **hyperparameters)``
(by keyword when the constructor names ``in_channels`` and ``out_channels``, so a class
ordering them ``(in, out, hidden)`` works too) or ``factory(in, hidden, out)``. It is a
node encoder (``forward(x, edge_index)`` or ``forward(data)`` -> ``[N, out]``) unless the
class sets ``graph_level = True``; the task adapters give node encoders their heads.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from hydra.utils import get_class
from omegaconf import OmegaConf
from torch import Tensor, nn

from graphnetz.api.registry import MODELS, register
from graphnetz.config_dir import CONF_DIR
from graphnetz.models.adapters import adapt
from graphnetz.models.contract import capabilities
from graphnetz.task_types import RELATIONAL_LINK, TASK_LEVELS
from graphnetz.tasks import TASK_CLASSES
from graphnetz.training.build import ModelFactory

DEFAULT_HIDDEN = 64
_SCALARS = (bool, int, float, str, type(None))
#: keys of a user model's config node that are not constructor arguments
META_KEYS = ("name", "defined_in", "source_digest", "hidden_channels")
#: hex digits of :func:`source_digest` kept in the config (64 bits)
DIGEST_LENGTH = 16
SIZES = ("in_channels", "hidden_channels", "out_channels")


@dataclass(frozen=True, init=False)
class ModelSpec:
    """A user model: its class, the task types it serves and how to build it.

    ``ModelSpec(name, cls, task_types, factory=None)``, or the reference package's
    ``ModelSpec(cls, task_type, factory=None)`` / ``ModelSpec(cls=..., task_type=...)``
    (named after the class; ``task_type`` is an alias of ``task_types``, which default to
    the class's ``task_types`` attribute).
    """

    name: str
    cls: type
    task_types: frozenset[str]
    factory: Callable[..., nn.Module] | None = None  # (in, hidden, out[, task_type=])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name, cls, task_types, factory, task_type = _spec_arguments(args, kwargs)
        if task_types is not None and task_type is not None:
            raise TypeError("ModelSpec takes task_types= or its alias task_type=, not both")
        if not isinstance(cls, type):
            raise TypeError(f"ModelSpec needs the model class as cls=, got {cls!r}")
        name = cls.__name__ if name is None else name
        _check_name(name)
        declared = task_types if task_types is not None else task_type
        if declared is None:
            declared = getattr(cls, "task_types", None)
        if declared is None:
            raise ValueError(
                f"ModelSpec {name!r} ({cls.__name__}) needs the task types it serves: "
                "task_types= (or task_type=) or a class attribute task_types = {...}"
            )
        if factory is not None and not callable(factory):
            raise TypeError(f"ModelSpec {name!r}: the factory {factory!r} is not callable")
        for key, value in (
            ("name", name),
            ("cls", cls),
            ("task_types", task_type_set(declared, name)),
            ("factory", factory),
        ):
            object.__setattr__(self, key, value)

    @property
    def task_type(self) -> frozenset[str]:
        """The reference package's name for :attr:`task_types`."""
        return self.task_types

    @property
    def defined_in(self) -> str:
        return f"{self.cls.__module__}.{self.cls.__qualname__}"

    def hyperparameters(self) -> dict[str, Any]:
        """The run config's ``model`` node: the hidden width and, for a class, the scalar
        keyword defaults besides its sizes (each overridable as ``model.<name>``)."""
        params = [] if self.factory is not None else _parameters(self.cls)
        if _sizes_by_name(params):
            hidden = [p for p in params if p.name == "hidden_channels"]
            rest = [p for p in params if p.name not in SIZES]
        else:  # the reference's positional (in_channels, hidden_channels, out_channels)
            hidden, rest = params[1:2], params[3:]
        width = hidden[0].default if hidden else None
        found = {
            p.name: p.default
            for p in rest
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.default is not p.empty
            and isinstance(p.default, _SCALARS)
        }
        usable = isinstance(width, int) and not isinstance(width, bool)
        return {"hidden_channels": width if usable else DEFAULT_HIDDEN, **found}

    def config_node(self) -> dict[str, Any]:
        """The run config's ``model`` node; its ``source_digest`` puts the class's (and
        factory's) code into the run identity, so an edited model is a new run on resume."""
        digest = source_digest(self.cls, self.factory)
        return {
            "name": self.name,
            "defined_in": self.defined_in,
            "source_digest": digest,
            **self.hyperparameters(),
        }

    def model_factory(
        self, model_cfg: dict[str, Any], task_type: str | None = None
    ) -> ModelFactory:
        """How the pipeline builds this model with the run's (overridden) settings; a
        factory that takes ``task_type`` is called with it (the run's task type)."""
        settings = {k: v for k, v in model_cfg.items() if k not in META_KEYS}
        cls, params = self.cls, _parameters(self.cls)
        if self.factory is not None:
            build = _with_task_type(self.factory, task_type)
        elif _sizes_by_name(params):  # e.g. GraphModel's cls(in_channels=, out_channels=)
            named = {p.name for p in params}

            def build(i: int, h: int, o: int) -> nn.Module:
                hidden = {"hidden_channels": h} if "hidden_channels" in named else {}
                return cls(in_channels=i, out_channels=o, **hidden, **settings)
        else:
            build = lambda i, h, o: cls(i, h, o, **settings)  # noqa: E731
        name = self.name

        def checked(i: int, h: int, o: int) -> nn.Module:
            return check_width(check_forward(build(i, h, o), name), name, o)

        return ModelFactory(cls, checked, self.task_types)


def check_forward(model: nn.Module, name: str) -> nn.Module:
    """``model``, if its ``forward`` takes one of the calls the pipeline makes: ``forward(data)``
    (one required positional argument, not named ``x``), ``forward(x, edge_index)``, or
    ``forward(x, edge_index, batch)`` for a class with ``graph_level = True``."""
    if not isinstance(model, nn.Module):
        return model
    caps = capabilities(model)
    if caps.takes_data:
        return model
    args = ("x", "edge_index", "batch") if caps.graph_level else ("x", "edge_index")
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):  # nothing to read: the call itself will tell
        return model
    try:
        signature.bind(*args)
    except TypeError as err:
        raise TypeError(
            f"model {name!r} ({type(model).__name__}): forward{signature} cannot be called "
            f"as forward({', '.join(args)}) ({err}). The pipeline calls forward(data) when "
            "forward has exactly one required positional argument not named x, else "
            "forward(x, edge_index) (forward(x, edge_index, batch) with graph_level = True)"
        ) from None
    return model


def check_width(model: nn.Module, name: str, expected: int) -> nn.Module:
    """``model``, checked at its first call to return ``[..., expected]``: a wrong width is
    an error naming the widths, not a score over the wrong logits (or an IndexError)."""
    if not isinstance(model, nn.Module):
        return model

    def check(module: nn.Module, args: Any, output: Any) -> None:
        handle.remove()  # the first output decides; later calls cost nothing
        if isinstance(output, Tensor) and output.dim() >= 2 and output.shape[-1] != expected:
            raise ValueError(
                f"model {name!r} ({type(module).__name__}) returned outputs of width "
                f"{output.shape[-1]} (shape {tuple(output.shape)}); expected {expected}, the "
                f"out_channels it was built with: its last layer must map to out_channels"
            )

    handle = model.register_forward_hook(check)
    return model


def source_digest(*code: Any) -> str:
    """SHA-256 (first :data:`DIGEST_LENGTH` hex digits) of the code of each class or
    function given (None skipped): its source, or where there is none to read (a class
    defined in a notebook or a REPL) the source or compiled code of its methods."""
    joined = "\n\0".join(_code_text(obj) for obj in code if obj is not None)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:DIGEST_LENGTH]


def _code_text(obj: Any) -> str:
    """The source of ``obj``; else its qualified name and, for a class, its own methods'
    code (a notebook's class has no source file, its methods' cells do), for a function
    its compiled code."""
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):  # no source file to read
        pass
    name = getattr(obj, "__qualname__", type(obj).__qualname__)
    text = f"{getattr(obj, '__module__', '')}.{name}"
    if isinstance(obj, type):
        for key, value in sorted(vars(obj).items()):
            function = getattr(value, "__func__", value)  # staticmethod, classmethod
            if inspect.isfunction(function):
                text += f"\n{key}: {_code_text(function)}"
    elif inspect.iscode(code := getattr(obj, "__code__", None)):
        text += _compiled(code)
    return text


def _compiled(code: Any) -> str:
    """A code object's instructions, names and constants (nested code included), without
    its line numbers."""
    consts = [_compiled(c) if inspect.iscode(c) else repr(c) for c in code.co_consts]
    return repr((code.co_code, code.co_names, code.co_varnames, consts))


_OUR_ORDER = ("name", "cls", "task_types", "factory")
_REFERENCE_ORDER = ("cls", "task_type", "factory")


def _spec_arguments(args: tuple, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """``(name, cls, task_types, factory, task_type)`` of a ``ModelSpec(...)`` call: ours
    ``(name, cls, task_types, factory)``, or the reference's ``(cls, task_type, factory)``
    when the first positional argument is a class; keywords fill the rest."""
    order = _REFERENCE_ORDER if args and isinstance(args[0], type) else _OUR_ORDER
    if len(args) > len(order):
        raise TypeError(
            f"ModelSpec({', '.join(order)}) takes {len(order)} positional arguments, "
            f"got {len(args)}"
        )
    unknown = sorted(set(kwargs) - {*_OUR_ORDER, "task_type"})
    if unknown:
        raise TypeError(
            f"ModelSpec got unexpected keyword argument(s) {unknown}; it takes "
            f"{[*_OUR_ORDER, 'task_type']}"
        )
    given = dict(kwargs)
    for key, value in zip(order, args, strict=False):
        if key in given:
            raise TypeError(f"ModelSpec got {key}= twice (positionally and by keyword)")
        given[key] = value
    return tuple(given.get(k) for k in (*_OUR_ORDER, "task_type"))


def _with_task_type(factory: Callable[..., nn.Module], task_type: str | None) -> Callable:
    """``factory(in, hidden, out, task_type=...)`` when it takes that keyword (as the
    reference package calls it), else ``factory(in, hidden, out)``."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return factory
    takes = any(
        p.kind is p.VAR_KEYWORD
        or (p.name == "task_type" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        for p in params
    )
    if task_type is None or not takes:
        return factory
    return lambda i, h, o: factory(i, h, o, task_type=task_type)


def _parameters(cls: type) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):  # no introspectable signature: sizes only
        return []


def _sizes_by_name(params: list[inspect.Parameter]) -> bool:
    """Sizes go by keyword when the constructor names them, else by position."""
    return {"in_channels", "out_channels"} <= {p.name for p in params}


def task_type_set(value: Any, owner: str) -> frozenset[str]:
    """One task type or an iterable of them, checked against the task types there are."""
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


def _check_name(name: Any) -> None:
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"model name must be a non-empty string without '/', got {name!r}")


def register_model(
    cls: type | None = None,
    *,
    task_type: str | Iterable[str] | None = None,
    task_types: str | Iterable[str] | None = None,
    factory: Callable[..., nn.Module] | None = None,
    name: str | None = None,
):
    """Register a model for ``task_type`` (one or a set; ``task_types=`` is an alias).

    Usable as ``@register_model(task_type={"node_cls"})`` or as
    ``register_model(Enc, task_type={...}, factory=_multi_task_factory(Enc))``; returns the
    class unchanged. Registered under ``name`` (default: the class name), so
    ``models={"Mine": Enc}`` and ``models=["Enc"]`` both find it. Defining the class again
    (a notebook cell run twice) replaces the registration.
    """
    if (task_type is None) == (task_types is None):
        raise TypeError("register_model takes exactly one of task_type= or task_types=")
    declared = task_type if task_type is not None else task_types
    if factory is not None and not callable(factory):
        raise TypeError(f"factory must be a callable (in, hidden, out) -> Module, got {factory!r}")

    def decorate(klass: type) -> type:
        if not isinstance(klass, type):
            raise TypeError(f"register_model registers a class, got {klass!r}")
        key = name or klass.__name__
        _check_name(key)
        spec = ModelSpec(key, klass, task_type_set(declared, key), factory)
        register(MODELS, key, spec, same=lambda old, new: old.defined_in == new.defined_in)
        return klass

    return decorate if cls is None else decorate(cls)


def unregister_model(name: str) -> None:
    if name not in MODELS:
        raise ValueError(f"no model registered as {name!r}; registered: {sorted(MODELS)}")
    del MODELS[name]


def registered_models() -> dict[str, ModelSpec]:
    return dict(MODELS)


def _multi_task_factory(encoder_cls: type) -> Callable[..., nn.Module]:
    """A factory building the node encoder ``encoder_cls(in, hidden, out)`` for every task
    type: the pipeline's adapters add the head each task type needs (the node task uses
    the encoder as it is, graph tasks pool it, link prediction decodes pairs)."""

    def factory(
        in_channels: int, hidden_channels: int, out_channels: int, *, task_type: str | None = None
    ) -> nn.Module:
        return encoder_cls(in_channels, hidden_channels, out_channels)

    return factory


def model_spec(name: str, value: Any) -> ModelSpec:
    """The spec of a ``models={name: value}`` entry in any of the forms above."""
    _check_name(name)
    if isinstance(value, ModelSpec):
        return dataclasses.replace(value, name=name)
    if isinstance(value, str):
        if value not in MODELS:
            raise ValueError(f"no model registered as {value!r}; registered: {sorted(MODELS)}")
        return dataclasses.replace(MODELS[value], name=name)
    if isinstance(value, tuple):
        if not 2 <= len(value) <= 3 or not isinstance(value[0], type):
            raise ValueError(
                f"model {name!r}: an inline model is (cls, task_type) or (cls, task_type, "
                f"factory) with factory(in, hidden, out) -> Module; got {value!r}"
            )
        cls, declared, factory = (*value, None)[:3]
        if factory is not None and not callable(factory):
            raise ValueError(f"model {name!r}: the factory {factory!r} is not callable")
        return ModelSpec(name, cls, task_type_set(declared, name), factory)
    if isinstance(value, type):
        for spec in MODELS.values():
            if spec.cls is value:
                return dataclasses.replace(spec, name=name)
        declared = getattr(value, "task_types", None)
        if declared is None:
            raise ValueError(
                f"model {name!r} ({value.__name__}) does not say which task types it serves: "
                "decorate it with @register_model(task_type=...), give it a class attribute "
                "task_types = {...}, or pass (cls, task_type, factory)"
            )
        return ModelSpec(name, value, task_type_set(declared, name))
    raise TypeError(
        f"model {name!r}: expected a conf/model name, a registered name, a class or "
        f"a (cls, task_type[, factory]) tuple; got {type(value).__name__}"
    )


def conf_models() -> dict[str, str]:
    """conf/model YAML name -> the ``_target_`` it builds."""
    return {
        p.stem: str(OmegaConf.load(p).get("_target_"))
        for p in sorted((CONF_DIR / "model").glob("*.yaml"))
    }


def conf_model_of(cls: type) -> str | None:
    """The conf/model YAML that builds ``cls`` (so ``{"GCN": GCN}`` runs as ``model=gcn``)."""
    for stem, target in conf_models().items():
        try:
            if get_class(target) is cls:
                return stem
        except Exception:  # a YAML whose class does not import is not this class
            continue
    return None


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
    for name, spec in MODELS.items():
        served = ", ".join(sorted(spec.task_types))
        rows.append(
            {"name": name, "kind": "registered", "builds": spec.defined_in, "task_types": served}
        )
    return pd.DataFrame(rows, columns=["name", "kind", "builds", "task_types"])


def wrap_encoder(
    encoder: type | Callable[..., nn.Module],
    task_type: str,
    in_channels: int,
    out_channels: int,
    hidden_channels: int = DEFAULT_HIDDEN,
    **extras: Any,
) -> nn.Module:
    """The model the pipeline would build for ``task_type`` from a node encoder class (or
    ``factory(in, hidden, out)``): node tasks get it as it is, graph tasks a mean-pool + MLP
    head, link prediction a dot-product decoder (DistMult with ``num_relations``/``num_nodes``).
    """
    task_type_set(task_type, "wrap_encoder")
    if not callable(encoder):
        raise TypeError(
            f"wrap_encoder takes an encoder class or a factory(in, hidden, out); "
            f"got {type(encoder).__name__}"
        )
    cls = encoder if isinstance(encoder, type) else nn.Module
    level = RELATIONAL_LINK if extras.get("num_relations") is not None else TASK_LEVELS[task_type]
    name = getattr(encoder, "__name__", type(encoder).__name__)
    build = lambda i, o: check_width(  # noqa: E731
        check_forward(encoder(i, hidden_channels, o), name), name, o
    )
    return adapt(build, cls, level, in_channels, out_channels, hidden_channels, **extras)


__all__ = [
    "ModelSpec",
    "_multi_task_factory",
    "conf_models",
    "list_models",
    "model_spec",
    "register_model",
    "registered_models",
    "unregister_model",
    "wrap_encoder",
]
