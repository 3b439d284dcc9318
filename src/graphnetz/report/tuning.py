"""Which runs of a report were tuned (``+tuned=<study>``), on what budget and how.

Pure functions over run records (or their JSON objects); they import nothing else from
the report, so both the record reader and the writers can use them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any


def tuning_of(record: Any) -> dict[str, Any] | None:
    """The ``tuning`` block a ``+tuned=<study>`` run carries in its config (a
    :class:`~graphnetz.run_record.RunRecord` or its JSON object), or None if untuned."""
    config = record.get("config") if isinstance(record, Mapping) else record.config
    tuning = (config or {}).get("tuning") if isinstance(config, Mapping) else None
    return dict(tuning) if isinstance(tuning, Mapping) and tuning.get("study") else None


def tuning_summary(records: Iterable[Any]) -> dict[str, Any]:
    """``{"studies": [...], "untuned": n}``: one entry per study the runs were tuned by
    (study, storage, task, model, runs, budget, trials, metric, value, inner seeds, space),
    in first-seen order, and the number of runs that were not tuned. A study is its name
    and its storage (two searches of one (task, model) in two output folders are two), and
    its point as selected on a budget (a study continued on a larger budget may select
    another)."""
    return summarize_tuning(tuning_of(record) for record in records)


def summarize_tuning(blocks: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """:func:`tuning_summary` from each run's ``tuning`` block (None: not tuned)."""
    studies: dict[tuple[str, ...], dict[str, Any]] = {}
    untuned = 0
    for tuning in blocks:
        if tuning is None:
            untuned += 1
            continue
        key = (tuning["study"], tuning.get("storage"), tuning.get("budget"), tuning.get("params"))
        entry = studies.setdefault(
            tuple(json.dumps(part, sort_keys=True, default=str) for part in key),
            {
                "study": tuning["study"],
                "storage": tuning.get("storage"),
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
    storages: defaultdict[str, set[Any]] = defaultdict(set)
    for s in studies:
        storages[s["study"]].add(s.get("storage"))
    for s in studies:
        run = s["for"]
        target = f"{run.get('dataset')}/{run.get('task_type')} {run.get('model')}"
        value = s["value"]
        score = f"{value:.4f}" if isinstance(value, int | float) else "n/a"
        # a name two studies share (two output folders) is told apart by its storage
        where = f" in `{s.get('storage')}`" if len(storages[s["study"]]) > 1 else ""
        lines.append(
            f"- {target}: {s['runs']} run(s) at study `{s['study']}`{where} (space `{s['space']}`, "
            f"budget {s['budget']} trials, {s['trials_complete']} ok; mean {s['metric']} "
            f"{score} over inner seeds {s['inner_seeds']}): {s['params']}"
        )
    if untuned:
        lines.append(f"- {untuned} run(s) used their configs' values (not tuned)")
    return [*lines, ""]
