"""The Datasets section from the run records' ``dataset_facts``: what the sweep trained on.

Pure: the facts were measured at training time (``graphnetz.training.facts``) and travel
in each record; nothing here loads a dataset. An entry is one analysed run::

    {"dataset": name, "task_type": ..., "seed": int, "loader": loader config (dict),
     "facts": {"statistics": row | None, "chance": {...} | None, "seeded_loader": bool}
              | None,
     "path": where the record was read, "note": why facts are missing (optional)}

(see :func:`graphnetz.report.records.dataset_entry`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from graphnetz.task_types import DESCRIBED_TASK_TYPES

from .analysis import DatasetSection

NO_FACTS = (
    "no dataset facts in its run records (written before records carried them; "
    "`analyze.py` measures them)"
)


def _seed_order(entry: Mapping[str, Any]) -> float:
    seed = entry.get("seed")
    return seed if isinstance(seed, int) else math.inf


def _described(entry: Mapping[str, Any]) -> bool:
    facts = entry.get("facts")
    return isinstance(facts, Mapping) and facts.get("statistics") is not None


def _group(entries: Iterable[Mapping[str, Any]]):
    """Entries of the described task types by (dataset name, loader JSON); notes for
    entries that name no loader."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    notes: list[str] = []
    for entry in entries:
        if entry.get("task_type") not in DESCRIBED_TASK_TYPES:
            continue
        if entry.get("loader") is None:
            where = entry.get("path") or entry.get("dataset")
            notes.append(f"run {where}: {entry.get('note') or 'no dataset config'}")
            continue
        key = (str(entry.get("dataset")), json.dumps(entry["loader"], sort_keys=True))
        groups.setdefault(key, []).append(entry)
    return groups, notes


def _chance(label: str, shown: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Mean chance value over the shown runs (one per seed), with its metric and rule."""
    levels = [e["facts"]["chance"] for e in shown if e["facts"].get("chance")]
    if not levels:
        return None
    return {
        "dataset": label,
        "seeds": [e["seed"] for e in shown],
        **{k: levels[0].get(k) for k in ("metric", "split", "rule")},
        "value": sum(float(c["value"]) for c in levels) / len(levels),
    }


def dataset_section(entries: Iterable[Mapping[str, Any]]) -> DatasetSection:
    """One statistics row and one chance level per (dataset name, loader config).

    Only entries of :data:`DESCRIBED_TASK_TYPES`. A name used with several loader configs
    is labelled ``name [loader JSON]``. The row is the statistics of the run with the
    smallest seed. The chance level is the mean over the distinct run seeds of each
    seed's test chance value, also for a seeded loader (the graph is drawn from the run
    seed: the statistics are of one seed's graph, and a note says so). A dataset
    whose runs carry no facts becomes a note (with the entries' ``note`` if any).
    """
    groups, notes = _group(entries)
    names = [name for name, _ in groups]
    rows, chance = [], []
    for (name, loader), group in sorted(groups.items()):
        label = name if names.count(name) == 1 else f"{name} [{loader}]"
        described = sorted((e for e in group if _described(e)), key=_seed_order)
        if not described:
            reason = next((e["note"] for e in group if e.get("note")), None)
            notes.append(f"{label}: {reason or NO_FACTS}")
            continue
        by_seed: dict[Any, Mapping[str, Any]] = {}
        for entry in described:
            by_seed.setdefault(entry.get("seed"), entry)
        first = described[0]
        seeded = any(e["facts"].get("seeded_loader") for e in described)
        rows.append({**first["facts"]["statistics"], "dataset": label})
        level = _chance(label, list(by_seed.values()))
        if level is not None:
            chance.append(level)
        if seeded:
            notes.append(
                f"{label}: generated per run seed; statistics of seed {first['seed']}, "
                "chance level the mean over the seeds' graphs"
            )
        missing = sorted({e.get("seed") for e in group} - set(by_seed), key=str)
        if missing:
            notes.append(
                f"{label}: no dataset facts for seed(s) {', '.join(map(str, missing))}; "
                "left out of the chance level"
            )
    return DatasetSection(tuple(rows), tuple(chance), tuple(notes))
