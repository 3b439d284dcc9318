"""Reading per-seed results: run records (``result.json``) and long CSV tables.

Everything becomes one long table with columns ``task, model, seed, metric, value,
direction``. Metric names: a test-split metric is stored under its plain name
(``accuracy``); any other split is prefixed (``val:accuracy``, ``train:loss``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from graphnetz.run_record import (
    DIRECTIONS,
    RECORD_NAME,
    RecordError,
    RunRecord,
    infer_direction,
    whole_number,
)

COLUMNS = ["task", "model", "seed", "metric", "value", "direction"]


def metric_key(metric: str) -> str:
    """Normalise ``test:accuracy`` to ``accuracy``; other ``split:name`` forms stay as given."""
    metric = metric.strip()
    split, sep, name = metric.partition(":")
    if sep and split == "test":
        return name
    return metric


#: Run-record fields that become ``cost:<field>`` rows (report section "Cost").
COST_FIELDS = ("wall_time_s", "epochs_run")


@dataclass
class Collected:
    """Rows of the long table plus everything that did not become a row."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    primary_metrics: dict[str, str] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    unreadable: list[dict[str, Any]] = field(default_factory=list)
    versions: dict[str, set[str]] = field(default_factory=dict)
    #: One :func:`dataset_entry` per ok run record (input of the Datasets section).
    datasets: list[dict[str, Any]] = field(default_factory=list)
    #: ``task, model, seed, pairing`` of each ok record that carries a pairing fingerprint.
    pairing: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=COLUMNS)


def _where(path: str | None) -> dict[str, Any]:
    return {"path": path} if path else {}


def dataset_entry(rec: RunRecord | Mapping[str, Any], path: str | None = None) -> dict[str, Any]:
    """What the Datasets section needs of one run record (a :class:`RunRecord` or its raw
    JSON object): ``dataset``, ``task_type``, ``seed``, the ``loader`` config, the record's
    ``dataset_facts`` as ``facts`` and ``path``. A record without facts (schema 1) also
    keeps its ``config``, from which the command line computes them
    (``graphnetz.cli.legacy_facts``)."""
    fields = rec.to_dict() if isinstance(rec, RunRecord) else rec
    config = fields.get("config")
    dataset = config.get("dataset") if isinstance(config, Mapping) else None
    entry = {
        "dataset": fields.get("dataset"),
        "task_type": fields.get("task_type"),
        "seed": fields.get("seed"),
        "loader": dataset.get("loader") if isinstance(dataset, Mapping) else None,
        "facts": fields.get("dataset_facts"),
        "path": path,
    }
    if entry["facts"] is None:
        entry["config"] = config
    return entry


def add_record(acc: Collected, raw: Any, path: str | None = None) -> None:
    """Parse one run record (a :class:`RunRecord` or its JSON object) into ``acc``;
    problems are listed, never raised."""
    try:
        rec = raw if isinstance(raw, RunRecord) else RunRecord.from_dict(raw)
    except RecordError as err:
        acc.unreadable.append({"path": path, "reason": str(err)})
        return
    ident = {"task": rec.task, "model": rec.model, "seed": rec.seed}
    if rec.status == "skipped":
        acc.skipped.append({**ident, "reason": rec.reason or "no reason given", **_where(path)})
        return
    if rec.status == "failed":
        acc.failed.append({**ident, "error": rec.error or "no error given", **_where(path)})
        return
    primary, value = rec.primary_metric, _number(rec.metrics["test"][rec.primary_metric])
    if value is None or not math.isfinite(value):
        shown = rec.metrics["test"][primary]
        acc.failed.append(
            {**ident, "error": f"test {primary} is not a finite number: {shown!r}", **_where(path)}
        )
        return
    acc.primary_metrics.setdefault(rec.task, primary)
    row = {"task": rec.task, "model": rec.model, "seed": rec.seed}
    for split, values in rec.metrics.items():
        if not isinstance(values, Mapping):
            continue
        for name, raw_value in values.items():
            v = _number(raw_value)
            if v is None or not math.isfinite(v):
                continue
            d = rec.direction if name == primary else infer_direction(name)
            acc.rows.append(
                {**row, "metric": metric_key(f"{split}:{name}"), "value": v, "direction": d}
            )
    for name in COST_FIELDS:  # what the run cost, kept beside the metrics as cost:<field>
        v = _number(getattr(rec, name))
        if v is not None and math.isfinite(v):
            acc.rows.append({**row, "metric": f"cost:{name}", "value": v, "direction": "min"})
    for lib, ver in rec.versions.items():
        acc.versions.setdefault(str(lib), set()).add(str(ver))
    acc.datasets.append(dataset_entry(rec, path))
    if rec.pairing:
        acc.pairing.append({**row, "pairing": rec.pairing})


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    return float(raw)


def collect_records(records: Iterable[Any]) -> Collected:
    acc = Collected()
    for rec in records:
        where = rec.run_dir if isinstance(rec, RunRecord) else None
        if isinstance(rec, Mapping):
            where = rec.get("run_dir")
        add_record(acc, rec, where)
    return acc


def find_result_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every ``result.json`` under the given directories (recursive) or given directly.

    Sorted naturally (``2_...`` before ``10_...``), so tasks and models keep the order of the
    sweep's job numbers, i.e. the order the user wrote them in.
    """
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"no such file or directory: {p}")
        found.extend([p] if p.is_file() else sorted(p.rglob(RECORD_NAME), key=natural_key))
    return found


def natural_key(path: Path) -> list:
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in re.split(r"(\d+)", str(path))
    ]


def collect_run_dirs(paths: Iterable[str | Path]) -> Collected:
    """Read every run record; unreadable, truncated or half-written files are listed."""
    acc = Collected()
    for f in find_result_files(paths):
        try:
            rec = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            acc.unreadable.append({"path": str(f), "reason": f"{type(exc).__name__}: {exc}"})
            continue
        add_record(acc, rec, str(f))
    return acc


def collect_csv(path: str | Path) -> Collected:
    """Long CSV ``task,model,seed,metric,value[,direction]``.

    A missing or empty direction is inferred from the metric name (:func:`infer_direction`).
    A task's primary metric is the first metric listed for it.
    """
    df = pd.read_csv(path)
    required = ["task", "model", "seed", "metric", "value"]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {missing}; required {required} (+ optional 'direction')"
        )
    df = df.dropna(subset=["task", "model", "seed", "metric"])
    acc = Collected()
    for row in df.itertuples(index=False):
        metric = metric_key(str(row.metric))
        direction = getattr(row, "direction", None)
        if not isinstance(direction, str) or not direction.strip():
            direction = infer_direction(metric)
        direction = direction.strip()
        if direction not in DIRECTIONS:
            raise ValueError(f"{path}: direction {direction!r} is not one of {list(DIRECTIONS)}")
        value = float(row.value)
        seed = whole_number(row.seed)
        if seed is None:
            raise ValueError(f"{path}: seed {row.seed!r} is not an integer")
        task, model = str(row.task), str(row.model)
        if not math.isfinite(value):
            acc.failed.append(
                {
                    "task": task,
                    "model": model,
                    "seed": seed,
                    "error": f"{metric} is not a finite number: {value}",
                }
            )
            continue
        acc.primary_metrics.setdefault(task, metric)
        acc.rows.append(
            {
                "task": task,
                "model": model,
                "seed": seed,
                "metric": metric,
                "value": value,
                "direction": direction,
            }
        )
    return acc
