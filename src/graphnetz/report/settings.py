"""The report's settings: allowed values and validation on assignment; and how the runs
were set up where the report says so (which runs were tuned, on what budget, how)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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


# ---------------------------------------------------------------------- tuned runs
def tuning_of(record: Any) -> dict[str, Any] | None:
    """The ``tuning`` block a ``+tuned=<study>`` run carries in its config (a
    :class:`~graphnetz.run_record.RunRecord` or its JSON object), or None if untuned."""
    config = record.get("config") if isinstance(record, Mapping) else record.config
    tuning = (config or {}).get("tuning") if isinstance(config, Mapping) else None
    return dict(tuning) if isinstance(tuning, Mapping) and tuning.get("study") else None


def tuning_summary(records: Iterable[Any]) -> dict[str, Any]:
    """``{"studies": [...], "untuned": n}``: one entry per study the runs were tuned by
    (study, task, model, runs, budget, trials, metric, value, inner seeds, space), in
    first-seen order, and the number of runs that were not tuned."""
    return summarize_tuning(tuning_of(record) for record in records)


def summarize_tuning(blocks: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """:func:`tuning_summary` from each run's ``tuning`` block (None: not tuned)."""
    studies: dict[str, dict[str, Any]] = {}
    untuned = 0
    for tuning in blocks:
        if tuning is None:
            untuned += 1
            continue
        entry = studies.setdefault(
            tuning["study"],
            {
                "study": tuning["study"],
                "for": dict(tuning.get("for") or {}),
                "runs": 0,
                **{k: tuning.get(k) for k in TUNING_FIELDS},
            },
        )
        entry["runs"] += 1
    return {"studies": list(studies.values()), "untuned": untuned}


TUNING_FIELDS = ("space", "budget", "trials_complete", "metric", "direction", "value")
TUNING_FIELDS += ("inner_seeds", "params")


def tuning_lines(records: Iterable[Any]) -> list[str]:
    """The report's lines on tuning: which runs were tuned, on what budget and how (empty
    when no run was tuned)."""
    return tuning_lines_of(tuning_summary(records))


def tuning_lines_of(summary: Mapping[str, Any] | None) -> list[str]:
    """:func:`tuning_lines` from a :func:`tuning_summary` (as kept in the provenance)."""
    studies = list((summary or {}).get("studies") or [])
    untuned = int((summary or {}).get("untuned") or 0)
    if not studies:
        return []
    lines = ["Tuned runs (`python -m graphnetz.tune`, selected on the validation metric):"]
    for s in studies:
        run = s["for"]
        target = f"{run.get('dataset')}/{run.get('task_type')} {run.get('model')}"
        value = s["value"]
        score = f"{value:.4f}" if isinstance(value, int | float) else "n/a"
        lines.append(
            f"- {target}: {s['runs']} run(s) at study `{s['study']}` (space `{s['space']}`, "
            f"budget {s['budget']} trials, {s['trials_complete']} ok; mean {s['metric']} "
            f"{score} over inner seeds {s['inner_seeds']}): {s['params']}"
        )
    if untuned:
        lines.append(f"- {untuned} run(s) used their configs' values (not tuned)")
    return [*lines, ""]
