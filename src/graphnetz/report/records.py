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

COLUMNS = ["task", "model", "seed", "metric", "value", "direction"]
DIRECTIONS = ("max", "min")
STATUSES = ("ok", "skipped", "failed")
RECORD_SCHEMA_VERSIONS = (1, 2)
RESULT_FILE = "result.json"
#: Name tokens that mark a lower-is-better metric when no direction is given.
LOWER_IS_BETTER_TOKENS = ("mae", "mse", "rmse", "loss", "error")


def infer_direction(metric: str) -> str:
    """``"min"`` if the metric name contains a token mae/mse/rmse/loss/error, else ``"max"``.

    Tokens are split on non-alphanumerics, so ``val:loss`` and ``test_mae`` are "min",
    ``accuracy`` and ``ap`` are "max".
    """
    tokens = re.split(r"[^a-z0-9]+", metric.lower())
    return "min" if any(t in LOWER_IS_BETTER_TOKENS for t in tokens) else "max"


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

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=COLUMNS)


def _where(path: str | None) -> dict[str, Any]:
    return {"path": path} if path else {}


def dataset_entry(rec: Mapping[str, Any], path: str | None = None) -> dict[str, Any]:
    """What the Datasets section needs of one run record: ``dataset``, ``task_type``,
    ``seed``, the ``loader`` config, the record's ``dataset_facts`` as ``facts`` and
    ``path``. A record without facts (schema 1) also keeps its ``config``, from which the
    command line computes them (``graphnetz.cli.legacy_facts``)."""
    config = rec.get("config")
    dataset = config.get("dataset") if isinstance(config, Mapping) else None
    entry = {
        "dataset": rec.get("dataset"),
        "task_type": rec.get("task_type"),
        "seed": rec.get("seed"),
        "loader": dataset.get("loader") if isinstance(dataset, Mapping) else None,
        "facts": rec.get("dataset_facts"),
        "path": path,
    }
    if entry["facts"] is None:
        entry["config"] = config
    return entry


def add_record(acc: Collected, rec: Any, path: str | None = None) -> None:
    """Parse one run record into ``acc``; problems are listed, never raised."""
    if not isinstance(rec, Mapping):
        acc.unreadable.append({"path": path, "reason": "run record is not a JSON object"})
        return
    version = rec.get("schema_version", 1)
    if version not in RECORD_SCHEMA_VERSIONS:
        acc.unreadable.append(
            {
                "path": path,
                "reason": f"unsupported schema_version {version!r} "
                f"(supported: {list(RECORD_SCHEMA_VERSIONS)})",
            }
        )
        return
    status = rec.get("status", "ok")
    ident = {k: rec.get(k) for k in ("task", "model", "seed")}
    if status == "skipped":
        acc.skipped.append(
            {**ident, "reason": rec.get("reason") or "no reason given", **_where(path)}
        )
        return
    if status == "failed":
        acc.failed.append({**ident, "error": rec.get("error") or "no error given", **_where(path)})
        return
    if status != "ok":
        acc.unreadable.append(
            {"path": path, "reason": f"unknown status {status!r} (valid: {list(STATUSES)})"}
        )
        return
    missing = [
        k for k in ("task", "model", "seed", "metrics", "primary_metric") if rec.get(k) is None
    ]
    if missing:
        acc.unreadable.append({"path": path, "reason": f"missing field(s): {', '.join(missing)}"})
        return
    primary = str(rec["primary_metric"])
    metrics = rec["metrics"]
    test = metrics.get("test") if isinstance(metrics, Mapping) else None
    if not isinstance(test, Mapping) or primary not in test:
        acc.unreadable.append(
            {"path": path, "reason": f"missing metrics.test.{primary} (the primary metric)"}
        )
        return
    try:
        seed = int(rec["seed"])
    except (TypeError, ValueError):
        acc.unreadable.append({"path": path, "reason": f"seed is not an integer: {rec['seed']!r}"})
        return
    direction = rec.get("direction") or infer_direction(primary)
    if direction not in DIRECTIONS:
        acc.unreadable.append(
            {"path": path, "reason": f"direction {direction!r} is not one of {list(DIRECTIONS)}"}
        )
        return
    task, model = str(rec["task"]), str(rec["model"])
    value = _number(test[primary])
    if value is None or not math.isfinite(value):
        acc.failed.append(
            {
                **ident,
                "error": f"test {primary} is not a finite number: {test[primary]!r}",
                **_where(path),
            }
        )
        return
    acc.primary_metrics.setdefault(task, primary)
    for split, values in metrics.items():
        if not isinstance(values, Mapping):
            continue
        for name, raw in values.items():
            v = _number(raw)
            if v is None or not math.isfinite(v):
                continue
            key = metric_key(f"{split}:{name}")
            d = direction if name == primary else infer_direction(name)
            acc.rows.append(
                {
                    "task": task,
                    "model": model,
                    "seed": seed,
                    "metric": key,
                    "value": v,
                    "direction": d,
                }
            )
    for name in COST_FIELDS:  # what the run cost, kept beside the metrics as cost:<field>
        v = _number(rec.get(name))
        if v is not None and math.isfinite(v):
            acc.rows.append(
                {
                    "task": task,
                    "model": model,
                    "seed": seed,
                    "metric": f"cost:{name}",
                    "value": v,
                    "direction": "min",
                }
            )
    for lib, ver in (rec.get("versions") or {}).items():
        acc.versions.setdefault(str(lib), set()).add(str(ver))
    acc.datasets.append({**dataset_entry(rec, path), "seed": seed})


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    return float(raw)


def collect_records(records: Iterable[Any]) -> Collected:
    acc = Collected()
    for rec in records:
        add_record(acc, rec, rec.get("run_dir") if isinstance(rec, Mapping) else None)
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
        found.extend([p] if p.is_file() else sorted(p.rglob(RESULT_FILE), key=natural_key))
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
        task, model, seed = str(row.task), str(row.model), int(row.seed)
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
