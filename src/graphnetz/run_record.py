"""The run record: one self-describing ``result.json`` per run (dataset x task x model x seed).

The training pipeline writes it (atomically: readers never see half a record) and the report
reads it; this module is the only place that knows its layout. Schema 2 stores the config
*resolved* (every default filled in, the data paths absolute, no interpolation left) and the
``dataset_facts`` measured at training time. Schema-1 records, written before, still read:
their config is the one the user composed, unresolved, and they carry no dataset facts.

Statuses: ``ok`` (trained and evaluated), ``skipped`` (the model does not serve the task
type; decided before any data is loaded), ``failed`` (anything raised; ``error`` has the
traceback), ``diverged`` (the training loss or the primary metric became non-finite;
``diverged_epoch`` says when; never analysed).

``identity`` (:mod:`graphnetz.run_identity`) is the hash of the result-bearing config that
resume and the report key runs by; records written before it was stored have it computed
from their resolved config (schema 2) or have none (schema 1). ``num_threads`` is the torch
thread count the run used (bit-identical results need equal counts).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from graphnetz.atomic import write_text
from graphnetz.run_identity import config_identity

RECORD_NAME = "result.json"
RECORD_SCHEMA_VERSION = 2
READABLE_SCHEMA_VERSIONS = (1, 2)
STATUSES = ("ok", "skipped", "failed", "diverged")
#: The statuses best first: of one run's records (same identity) the best speaks for it,
#: in the report and in ``status`` alike.
STATUSES_BEST_FIRST = ("ok", "skipped", "diverged", "failed")
#: Statuses a resumed sweep does not run again: their result is known (a diverged run
#: diverges again with the same config and seed).
FINISHED_STATUSES = ("ok", "skipped", "diverged")
DIRECTIONS = ("max", "min")
#: Name tokens that mark a lower-is-better metric when no direction is given.
LOWER_IS_BETTER_TOKENS = ("mae", "mse", "rmse", "loss", "error")


class RecordError(ValueError):
    """Not a readable run record; the message says what is wrong with it."""


def infer_direction(metric: str) -> str:
    """``"min"`` if the metric name contains a token mae/mse/rmse/loss/error, else ``"max"``.

    Tokens are split on non-alphanumerics, so ``val:loss`` and ``test_mae`` are "min",
    ``accuracy`` and ``ap`` are "max".
    """
    tokens = re.split(r"[^a-z0-9]+", metric.lower())
    return "min" if any(t in LOWER_IS_BETTER_TOKENS for t in tokens) else "max"


@dataclass(frozen=True)
class RunRecord:
    """What one run did and measured. ``metrics`` maps split -> metric name -> value at the
    selected epoch; ``history`` has one row per evaluated epoch; ``data`` describes the
    split; ``resumed`` (or None) says from which epoch an interrupted run continued
    (``restarted``: why it started over instead);
    ``pairing`` (or None, as in records written before it) fingerprints what a paired
    comparison with another model's run of the same seed assumes is shared."""

    status: str
    task: str | None = None
    dataset: str | None = None
    category: str | None = None
    task_type: str | None = None
    model: str | None = None
    seed: Any = None
    reason: str | None = None
    error: str | None = None
    primary_metric: str | None = None
    direction: str | None = None
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    selection: str | None = None
    selected_epoch: int | None = None
    epochs_run: int | None = None
    history: list[dict[str, float]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    dataset_facts: dict[str, Any] | None = None
    wall_time_s: float | None = None
    resumed: dict[str, Any] | None = None
    pairing: dict[str, Any] | None = None
    config: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    run_dir: str | None = None
    identity: str | None = None
    num_threads: int | None = None
    diverged_epoch: int | None = None
    #: Trained together with the cell's other seeds (training/stacked.py): ``seeds`` (the
    #: stack) and ``wall_time_s`` (this run's share); None for a run trained alone.
    stacked: dict[str, Any] | None = None
    schema_version: int = RECORD_SCHEMA_VERSION

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_dict(cls, raw: Any) -> RunRecord:
        """A record from its JSON object (schema 1 or 2); :class:`RecordError` says why
        an object is not one."""
        if not isinstance(raw, Mapping):
            raise RecordError("run record is not a JSON object")
        version = raw.get("schema_version", 1)
        if version not in READABLE_SCHEMA_VERSIONS:
            raise RecordError(
                f"unsupported schema_version {version!r} "
                f"(supported: {list(READABLE_SCHEMA_VERSIONS)})"
            )
        status = raw.get("status", "ok")  # schema-1 writers always set it; old CSVs did not
        if status not in STATUSES:
            raise RecordError(f"unknown status {status!r} (valid: {list(STATUSES)})")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known and v is not None}
        values.update(status=status, schema_version=version)
        if status == "ok":
            values.update(_checked_result(raw))
        return cls(**values)

    @classmethod
    def read(cls, path: str | os.PathLike) -> RunRecord:
        """The record in ``path``; OSError if unreadable, RecordError if not a record."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise RecordError(f"{type(err).__name__}: {err}") from err
        try:
            return cls.from_dict(raw)
        except RecordError as err:
            raise RecordError(f"{path}: {err}") from err

    # ------------------------------------------------------------------ writing
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def write(self, run_dir: str | os.PathLike) -> Path:
        """Write ``run_dir/result.json`` via a temp file + rename."""
        return write_json_atomic(Path(run_dir) / RECORD_NAME, self.to_dict())

    # ------------------------------------------------------------------ facts
    @property
    def finished(self) -> bool:
        """Complete, so a resumed sweep does not run it again (failed runs run again)."""
        return self.status in FINISHED_STATUSES

    def run_identity(self) -> str | None:
        """The stored identity, else the one of the stored config when it is resolved
        (schema 2), else None (schema 1: the config was stored as composed)."""
        if self.identity:
            return self.identity
        if self.schema_version >= 2 and self.config:
            return config_identity(self.config)
        return None

    def label(self) -> str:
        """``dataset/task_type model seed=S``: how log lines name a run."""
        return f"{self.task or self.dataset} {self.model} seed={self.seed}"

    def test_value(self) -> float | None:
        """The primary metric on the reported split (test; val where there is no test)."""
        split = self.metrics.get("test", self.metrics.get("val", {}))
        return split.get(self.primary_metric) if self.primary_metric else None

    def validation_value(self) -> float | None:
        """The primary metric on the validation split (what model selection may read);
        None when the run has no validation split."""
        split = self.metrics.get("val", {})
        return split.get(self.primary_metric) if self.primary_metric else None


def _checked_result(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The fields an ``ok`` record must have, checked (RecordError names what is wrong)."""
    required = ("task", "model", "seed", "metrics", "primary_metric")
    missing = [k for k in required if raw.get(k) is None]
    if missing:
        raise RecordError(f"missing field(s): {', '.join(missing)}")
    primary = str(raw["primary_metric"])
    metrics = raw["metrics"]
    test = metrics.get("test") if isinstance(metrics, Mapping) else None
    if not isinstance(test, Mapping) or primary not in test:
        raise RecordError(f"missing metrics.test.{primary} (the primary metric)")
    seed = whole_number(raw["seed"])
    if seed is None:
        raise RecordError(f"seed is not an integer: {raw['seed']!r}")
    direction = raw.get("direction") or infer_direction(primary)
    if direction not in DIRECTIONS:
        raise RecordError(f"direction {direction!r} is not one of {list(DIRECTIONS)}")
    return {
        "task": str(raw["task"]),
        "model": str(raw["model"]),
        "seed": seed,
        "primary_metric": primary,
        "direction": direction,
    }


def whole_number(value: Any) -> int | None:
    """``value`` as an int if it is one (``3``, ``3.0``, ``"3"``), else None (``1.5``,
    ``True``: a bool is not a seed, and rounding would merge two runs into one)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def write_json_atomic(path: str | os.PathLike, payload: Any) -> Path:
    """Write JSON via a temp file + rename: readers never see half a file."""
    text = json.dumps(payload, indent=2, default=_jsonable, allow_nan=True)
    return write_text(path, text)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)
