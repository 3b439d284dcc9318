"""Reading per-seed results: run records (``result.json``) and long CSV tables.

Everything becomes one long table with columns ``task, model, seed, metric, value,
direction``. Metric names: a test-split metric is stored under its plain name
(``accuracy``); any other split is prefixed (``val:accuracy``, ``train:loss``).

Run records are keyed by their identity (:mod:`graphnetz.run_identity`): a record found
twice with the same result (a sweep read through two folders, a copied run) is counted once,
silently; two records of one identity with different results are named as conflicting, and
the first is analysed. Of one identity's records in different states (a rerun without
``resume=true`` written beside its finished record, ``<dir>_rerun1``), the best state
speaks for the run, in the order ``python -m graphnetz status`` uses (ok, skipped,
diverged, failed): a failed rerun beside an analysed record is no failed run, only named in
one warning, and one identity's skipped, diverged or failed records count once. Runs of one task and model that differ in a setting besides the seed
(a swept ``task.lr``, say) are separate entries: the model is labelled with the settings that
vary, ``gcn[task.lr=0.01]``, except the one configuration that the model's other tasks of
the same task type name (:func:`model_labels`). Diverged runs are listed, never analysed.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from graphnetz.report.tuning import tuning_of
from graphnetz.run_identity import result_config, short_identity
from graphnetz.run_record import (
    DIRECTIONS,
    RECORD_NAME,
    STATUSES_BEST_FIRST,
    RecordError,
    RunRecord,
    infer_direction,
    whole_number,
)

COLUMNS = ["task", "model", "seed", "metric", "value", "direction"]

#: A recorded run's states, best first: of one identity's records the best speaks for the run.
STATES = STATUSES_BEST_FIRST


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
    #: Each analysed run's ``tuning`` block (None when it was not tuned).
    tunings: list[dict[str, Any] | None] = field(default_factory=list)
    #: Ok runs waiting to be keyed by identity and labelled (:func:`settle`).
    pending: list[tuple[RunRecord, str | None]] = field(default_factory=list)
    #: Records of an identity already read, with the same result: counted once.
    n_collapsed: int = 0
    #: Each not-analysed entry (in ``skipped`` or ``failed``) of a record with an identity,
    #: with that identity and the run's state: :func:`settle` keeps one per identity.
    judged: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    #: Records of an identity that another record, in a better state, speaks for (a
    #: failed rerun beside an analysed record): neither analysed nor listed.
    superseded: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many runs fell into each outcome (``failed`` without the diverged and
        conflicting entries it also lists)."""
        kinds = [e.get("status", "failed") for e in self.failed]
        return {
            "analysed": len(self.datasets),
            "failed": kinds.count("failed"),
            "diverged": kinds.count("diverged"),
            "skipped": len(self.skipped),
            "unreadable": len(self.unreadable),
            "collapsed duplicates": self.n_collapsed,
            "conflicting duplicates": kinds.count("conflicting"),
            "superseded reruns": len(self.superseded),
        }

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
    problems are listed, never raised. Ok runs become rows in :func:`settle`, which also
    keeps one entry per identity of the runs listed here."""
    try:
        rec = raw if isinstance(raw, RunRecord) else RunRecord.from_dict(raw)
    except RecordError as err:
        acc.unreadable.append({"path": path, "reason": str(err)})
        return
    ident = {"task": rec.task, "model": rec.model, "seed": rec.seed}
    identity = rec.run_identity()

    def listed(into: list[dict[str, Any]], state: str, entry: dict[str, Any]) -> None:
        into.append(entry)
        if identity:
            acc.judged.append((identity, state, entry))

    if rec.status == "skipped":
        reason = rec.reason or "no reason given"
        listed(acc.skipped, "skipped", {**ident, "reason": reason, **_where(path)})
        return
    if rec.status == "failed":
        error = rec.error or "no error given"
        listed(acc.failed, "failed", {**ident, "error": error, **_where(path)})
        return
    if rec.status == "diverged":
        reason = rec.reason or "diverged"
        entry = {**ident, "status": "diverged", "error": reason, **_where(path)}
        listed(acc.failed, "diverged", entry)
        return
    primary, value = rec.primary_metric, _number(rec.metrics["test"][rec.primary_metric])
    if value is None or not math.isfinite(value):
        shown = rec.metrics["test"][primary]
        error = f"test {primary} is not a finite number: {shown!r}"
        listed(acc.failed, "failed", {**ident, "error": error, **_where(path)})
        return
    acc.pending.append((rec, path))


def settle(acc: Collected) -> Collected:
    """Key the pending ok runs by identity (collapse identical duplicates, name conflicting
    ones), keep one entry per identity of the runs not analysed (:func:`_settle_listed`),
    label the models of runs that differ in a setting, and add their rows."""
    _settle_listed(acc)
    kept: dict[str, tuple[RunRecord, str | None]] = {}
    unique: list[tuple[RunRecord, str | None]] = []
    for rec, path in acc.pending:
        identity = rec.run_identity()
        first = kept.get(identity) if identity else None
        if first is None:
            if identity:
                kept[identity] = (rec, path)
            unique.append((rec, path))
        elif first[0].metrics == rec.metrics:
            acc.n_collapsed += 1
        else:
            acc.failed.append(_conflict(first, rec, path, identity))
    acc.pending = []
    labels = model_labels([rec for rec, _ in unique])
    for (rec, path), label in zip(unique, labels, strict=True):
        _add_rows(acc, rec, label, path)
    return acc


def _settle_listed(acc: Collected) -> None:
    """One entry per identity among the runs listed as not analysed, as ``python -m
    graphnetz status`` counts them: an identity with a record in a better state (an ok
    record, or a skipped one beside a failed rerun) is that record's run, and its worse
    records are ``superseded`` (named in one warning); of several records in the run's
    state, the first read is listed and the others count as collapsed duplicates.
    Records without an identity (schema 1) are all listed, as they were read."""
    best: dict[str, int] = {}
    for rec, _ in acc.pending:
        identity = rec.run_identity()
        if identity:
            best[identity] = STATES.index("ok")
    for identity, state, _ in acc.judged:
        best[identity] = min(best.get(identity, len(STATES)), STATES.index(state))
    dropped: set[int] = set()
    listed: set[str] = set()
    for identity, state, entry in acc.judged:
        if STATES.index(state) > best[identity]:
            acc.superseded.append({**entry, "status": state, "by": STATES[best[identity]]})
            dropped.add(id(entry))
        elif identity in listed:
            acc.n_collapsed += 1
            dropped.add(id(entry))
        else:
            listed.add(identity)
    acc.judged = []
    if dropped:
        acc.skipped[:] = [e for e in acc.skipped if id(e) not in dropped]
        acc.failed[:] = [e for e in acc.failed if id(e) not in dropped]
    if acc.superseded:
        warnings.warn(_superseded_note(acc.superseded), stacklevel=4)


def _superseded_note(superseded: list[dict[str, Any]]) -> str:
    """``not counted as runs: 1 failed record beside an analysed record of the same run
    (PATH)``: one line for all superseded records."""
    kinds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for entry in superseded:
        kinds.setdefault((entry["status"], entry["by"]), []).append(entry)
    parts = []
    for (state, by), entries in kinds.items():
        n, where = len(entries), next((e["path"] for e in entries if e.get("path")), None)
        beside = "an analysed record" if by == "ok" else f"a {by} record"
        shown = f" ({'e.g. ' if n > 1 else ''}{where})" if where else ""
        parts.append(f"{n} {state} record{'s' * (n > 1)} beside {beside} of the same run{shown}")
    return "not counted as runs (reruns without resume=true): " + "; ".join(parts)


def _conflict(first: tuple[RunRecord, str | None], rec: RunRecord, path, identity: str):
    where = first[1] or "an earlier record"
    return {
        "task": rec.task,
        "model": rec.model,
        "seed": rec.seed,
        "status": "conflicting",
        "error": (
            f"same identity {short_identity(identity)} as {where} but another result "
            f"({_first_difference(rec.metrics, first[0].metrics, rec.primary_metric)}); "
            "the first one read is analysed"
        ),
        **_where(path),
    }


def _first_difference(ours: Mapping[str, Any], theirs: Mapping[str, Any], primary: str) -> str:
    """``test accuracy 0.5 vs 0.9``: the first split and metric (the primary test metric
    first, then in the record's order) whose value differs between two records' metrics,
    each value as stored (``missing`` where a record lacks it)."""
    splits = ["test", *(s for s in ours if s != "test")]
    splits += [s for s in theirs if s not in splits]
    for split in splits:
        a, b = ours.get(split), theirs.get(split)
        a = a if isinstance(a, Mapping) else {}
        b = b if isinstance(b, Mapping) else {}
        names = [primary] if split == "test" and (primary in a or primary in b) else []
        names += [n for n in a if n not in names]
        names += [n for n in b if n not in names]
        for name in names:
            mine, other = a.get(name, _MISSING), b.get(name, _MISSING)
            if not _same(mine, other):
                return f"{split} {name} {_stored(mine)} vs {_stored(other)}"
    return "metrics differ"


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    both_nan = all(isinstance(v, float) and math.isnan(v) for v in (a, b))
    return both_nan or (a is not _MISSING and b is not _MISSING and a == b)


def _stored(value: Any) -> str:
    return "missing" if value is _MISSING else repr(value)


def model_labels(records: list[RunRecord]) -> list[str]:
    """Each record's model, with ``[key=value,...]`` for the settings (besides the seed)
    that differ between the records of its task and model; records without a resolved
    config (schema 1, hand-written) keep the plain model name.

    One configuration of a task and model keeps the plain name when the model's other tasks
    of the same task type say which one it is (:func:`_reference`): a variant added on one
    task (``task.lr=0.05`` on cora) is then the only labelled entry and the default run
    stays comparable, and ranked, across tasks. Tasks of another type do not vote, as their
    defaults differ. Where no task says, every configuration is labelled."""
    flat = [_flat_config(r) for r in records]
    groups: dict[tuple, list[int]] = {}
    for i, rec in enumerate(records):
        if flat[i] is not None:
            groups.setdefault((rec.task, rec.model), []).append(i)
    kinds = {(rec.task, rec.model): _task_type(rec) for rec in records}
    labels = [str(r.model) for r in records]
    for (task, model), members in groups.items():
        keys = sorted({k for i in members for k in flat[i]})
        columns = {k: tuple(_shown(flat[i].get(k)) for i in members) for k in keys}
        varying = [k for k in keys if len(set(columns[k])) > 1]
        # a setting interpolated from another (task.optimizer.lr = task.lr) is shown once
        varying = [
            k for n, k in enumerate(varying) if columns[k] not in [columns[j] for j in varying[:n]]
        ]
        if not varying:
            continue
        values = {i: tuple(_shown(flat[i].get(k)) for k in varying) for i in members}
        # only tasks of the same type vote: defaults differ by type (task.lr 0.01 for
        # node_cls, 0.001 for graph_cls), so a graph task's default is no node task's
        elsewhere = [
            {tuple(_shown(flat[j].get(k)) for k in varying) for j in others}
            for (other_task, other_model), others in groups.items()
            if other_model == model
            and other_task != task
            and kinds[other_task, other_model] == kinds[task, model]
        ]
        plain = _reference(set(values.values()), elsewhere)
        for i in members:
            if values[i] != plain:
                settings = ",".join(f"{k}={v}" for k, v in zip(varying, values[i], strict=True))
                labels[i] = f"{records[i].model}[{settings}]"
    return labels


def _reference(configurations: set[tuple], elsewhere: list[set[tuple]]) -> tuple | None:
    """The configuration (values of the varying settings) that keeps the model's plain name:
    the one the model ran with, and only with, on the most other tasks (of its task type,
    ``elsewhere``); None (every configuration labelled) when no such task ran one of them
    alone, or two tie."""
    votes = {c: sum(seen == {c} for seen in elsewhere) for c in configurations}
    best = max(votes.values())
    winners = [c for c, n in votes.items() if n == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _task_type(rec: RunRecord) -> str | None:
    """The record's task type: its ``task_type`` field, else the config's ``task.type``,
    else what follows the ``/`` of its task (``cora/node_cls``); None when none says."""
    if rec.task_type:
        return str(rec.task_type)
    task = rec.config.get("task") if isinstance(rec.config, Mapping) else None
    if isinstance(task, Mapping) and task.get("type"):
        return str(task["type"])
    name = str(rec.task or "")
    return name.rpartition("/")[2] if "/" in name else None


def _flat_config(rec: RunRecord) -> dict[str, Any] | None:
    if rec.run_identity() is None or not rec.config:
        return None
    flat: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, Mapping) and node:
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            flat[prefix[:-1]] = node

    walk(result_config(rec.config), "")
    flat.pop("seed", None)
    return flat


def _shown(value: Any) -> str:
    """A setting as written on the command line: ``0.01``, ``true``, ``null``, JSON else."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _add_rows(acc: Collected, rec: RunRecord, model: str, path: str | None) -> None:
    primary = rec.primary_metric
    acc.primary_metrics.setdefault(rec.task, primary)
    row = {"task": rec.task, "model": model, "seed": rec.seed}
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
    acc.tunings.append(tuning_of(rec))


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
    return settle(acc)


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
    return settle(acc)


def collect_csv(path: str | Path) -> Collected:
    """Long CSV ``task,model,seed,metric,value[,direction]``.

    A missing or empty direction is inferred from the metric name (:func:`infer_direction`).
    A task's primary metric is the first metric listed for it.
    """
    required = ["task", "model", "seed", "metric", "value"]
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path}: the file is empty; required columns {required}") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(
            f"{path}: missing column(s) {missing}; required {required} (+ optional 'direction')"
        )
    acc = Collected()
    directions: dict[tuple[str, str], tuple[str, int]] = {}
    for line, row in enumerate(df.itertuples(index=False), start=2):  # line 1: the header
        empty = [c for c in ("task", "model", "seed", "metric") if pd.isna(getattr(row, c))]
        if empty:
            raise ValueError(f"{path}, line {line}: empty {', '.join(empty)}")
        metric = metric_key(str(row.metric))
        direction = getattr(row, "direction", None)
        if not isinstance(direction, str) or not direction.strip():
            direction = infer_direction(metric)
        direction = direction.strip()
        if direction not in DIRECTIONS:
            raise ValueError(
                f"{path}, line {line}: direction {direction!r} is not one of {list(DIRECTIONS)}"
            )
        try:
            value = float(row.value)
        except (TypeError, ValueError):
            raise ValueError(f"{path}, line {line}: value {row.value!r} is not a number") from None
        seed = whole_number(row.seed)
        if seed is None:
            raise ValueError(f"{path}, line {line}: seed {row.seed!r} is not an integer")
        task, model = str(row.task), str(row.model)
        first = directions.setdefault((task, metric), (direction, line))
        if first[0] != direction:
            raise ValueError(
                f"{path}, line {line}: direction {direction!r} of {metric} on {task} differs "
                f"from {first[0]!r} on line {first[1]}; a metric has one direction per task"
            )
        primary = acc.primary_metrics.setdefault(task, metric)  # the first listed, finite or not
        if not math.isfinite(value):
            if metric == primary:  # the run's result is not a number: a failed run
                acc.failed.append(
                    {
                        "task": task,
                        "model": model,
                        "seed": seed,
                        "error": f"{metric} is not a finite number: {value}",
                    }
                )
            else:  # another metric of the run: that value only is left out
                warnings.warn(
                    f"{path}, line {line}: {metric} of {task} {model} seed={seed} is not a "
                    f"finite number ({value}); left out",
                    stacklevel=2,
                )
            continue
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
