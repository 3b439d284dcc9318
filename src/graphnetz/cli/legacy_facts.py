"""Dataset facts for run records written before records carried them (schema 1).

A record of schema 2 carries ``dataset_facts``, measured at training time. Older records
do not, and kept their config unresolved (``${oc.env:...}``, names built from loader
values). For their ``ml_node_cls`` runs this module reloads the dataset from each
record's own config, resolved the way the run saw it, re-splits it the way the task did
(``task_class(task_type).prepare(dataset, seed=seed, split=split)``) and measures the
facts with the same :func:`graphnetz.training.facts.dataset_facts` as training.

This is the only place of the analysis path that loads data; ``graphnetz.report`` never
does. A dataset that cannot be loaded becomes a note in the entry, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from graphnetz.report.datasets import dataset_section
from graphnetz.report.markdown_datasets import datasets_markdown
from graphnetz.report.records import dataset_entry, find_result_files
from graphnetz.task_types import DESCRIBED_TASK_TYPES

# Data, task and training code (torch, Lightning: seconds of imports) is imported only
# when an old record needs its facts measured, so a report of new records never loads it.


def _resolved(config: Mapping[str, Any], key: str) -> Any:
    """``config[key]`` with interpolations resolved against the whole run config."""
    node = OmegaConf.select(OmegaConf.create(dict(config)), key)
    return OmegaConf.to_container(node, resolve=True) if node is not None else None


def _identify(entry: dict[str, Any]) -> tuple[str, str, bool] | None:
    """Resolve the entry's dataset name and loader in place; (name, loader JSON, seeded),
    or None with a ``note`` when its config names no usable loader."""
    from graphnetz.data.loading import accepts_seed

    config = entry.get("config") or {}
    try:
        loader = _resolved(config, "dataset.loader")
        if loader is None:
            raise ValueError("its config has no dataset.loader")
        name = str(entry.get("dataset") or _resolved(config, "dataset.name"))
        seeded = accepts_seed(loader)
    except Exception as err:  # a malformed record is reported, not fatal
        entry["loader"] = None
        entry["note"] = f"no dataset config ({type(err).__name__}: {err})"
        return None
    entry["dataset"], entry["loader"] = name, loader
    return name, json.dumps(loader, sort_keys=True), seeded


def _measure(group: list[dict[str, Any]], seeded: bool, data_dir, mirror) -> None:
    """Facts for the runs of one dataset: every distinct seed of a fixed dataset (loaded
    once), or only the smallest seed of a seeded loader (the graph shown)."""
    from graphnetz.data.loading import load_dataset
    from graphnetz.tasks import task_class
    from graphnetz.training.facts import dataset_facts

    group = sorted(group, key=lambda e: e["seed"] if isinstance(e["seed"], int) else 0)
    by_seed: dict[Any, dict[str, Any]] = {}
    for entry in group:
        by_seed.setdefault(entry["seed"], entry)
    targets = [group[0]] if seeded else list(by_seed.values())
    first = targets[0]
    config, loader = first["config"], first["loader"]
    try:  # resolving may fail too (``${oc.env:...}`` of a variable unset here)
        paths = _resolved(config, "paths") or {}
        root = data_dir if data_dir is not None else paths.get("data_dir", "data")
        source = mirror if mirror is not None else paths.get("data_mirror")
        split = _resolved(config, "dataset.split")
        task_cls = task_class(first["task_type"])
        dataset = load_dataset(loader, root, source, seed=first["seed"] if seeded else None)
        for entry in targets:
            task_data = task_cls.prepare(dataset, seed=entry["seed"], split=split)
            entry["facts"] = dataset_facts(task_cls, task_data, entry["dataset"], loader)
    except Exception as err:  # one unavailable dataset must not hide the others
        for entry in group:
            entry["facts"] = None
            entry["note"] = f"not loaded ({type(err).__name__}: {err})"


def complete_dataset_facts(
    entries: Iterable[Mapping[str, Any]],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
) -> list[dict[str, Any]]:
    """The Datasets section's entries (:func:`graphnetz.report.records.dataset_entry`),
    with ``facts`` measured for the described task types' entries that lack them.

    ``data_dir`` / ``mirror`` default to each record's ``paths.data_dir`` /
    ``paths.data_mirror`` (relative paths are taken from the current directory). Entries
    come back without their ``config``.
    """
    out = [dict(e) for e in entries]
    groups: dict[tuple[str, str], tuple[bool, list[dict[str, Any]]]] = {}
    for entry in out:
        if entry.get("facts") is None and entry.get("task_type") in DESCRIBED_TASK_TYPES:
            key = _identify(entry)
            if key is not None:
                groups.setdefault(key[:2], (key[2], []))[1].append(entry)
    for seeded, group in groups.values():
        _measure(group, seeded, data_dir, mirror)
    for entry in out:
        entry.pop("config", None)
    return out


def legacy_dataset_section(
    records: Iterable[Mapping[str, Any]],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
    heading: str = "## Datasets",
) -> str:
    """The Markdown Datasets section of raw run records (any schema); "" without any
    ``ml_node_cls`` run."""
    entries = [dataset_entry(r, r.get("run_dir")) for r in records]
    section = dataset_section(complete_dataset_facts(entries, data_dir, mirror))
    return datasets_markdown(section, heading)


def legacy_dataset_section_from_run_dirs(
    paths: Iterable[str | Path],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
) -> str:
    """:func:`legacy_dataset_section` over every readable ``result.json`` under ``paths``."""
    records = []
    for path in find_result_files(paths):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # the statistical report already lists unreadable records
    return legacy_dataset_section(records, data_dir, mirror)
