"""The report's settings: allowed values and validation on assignment; and how the runs
were set up where the report says so (which runs were tuned, on what budget, how)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphnetz import stats

from . import records as rec_io

CI_METHODS = ("t", "bootstrap")
PAIRWISE_METHODS = ("t", "wilcoxon")
CLIQUE_METHODS = ("nemenyi", "wilcoxon-holm")
MISSING_RULES = ("drop-models", "drop-tasks")


def choice(name: str, value: Any, valid: tuple[str, ...]) -> str:
    """``value`` if it is one of ``valid``; else a ValueError naming it and the choices."""
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {list(valid)}")
    return value


class Setting:
    """An attribute validated on assignment by ``validate(owner, value) -> value``."""

    def __init__(self, validate: Callable[[Any, Any], Any]) -> None:
        self.validate = validate

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.attr)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj, self.attr, self.validate(obj, value))


def valid_metric(report: Any, value: str | None) -> str | None:
    """None (each task's primary metric) or a metric present in ``report.data``."""
    if value is None:
        return None
    value = rec_io.metric_key(value)
    available = sorted(report.data["metric"].unique())
    if value not in available:
        raise ValueError(f"metric {value!r} is not in the results; available: {available}")
    return value


def valid_alpha(_: Any, value: float) -> float:
    return stats._validate.check_alpha(value)


def valid_ci(_: Any, value: str) -> str:
    return choice("ci", value, CI_METHODS)


def valid_pairwise_method(_: Any, value: str) -> str:
    return choice("pairwise_method", value, PAIRWISE_METHODS)


def valid_cliques(_: Any, value: str) -> str:
    return choice("cliques", value, CLIQUE_METHODS)


def valid_missing(_: Any, value: str) -> str:
    return choice("missing", value, MISSING_RULES)


def valid_margin(_: Any, value: float | None) -> float | None:
    """None (no equivalence analysis) or a finite positive margin in the metric's units."""
    return None if value is None else stats.check_margin(value)


def positive_int(name: str) -> Callable[[Any, Any], int]:
    def validate(_: Any, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value!r}")
        return value

    return validate
