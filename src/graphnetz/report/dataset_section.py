"""The datasets section of a multi-label sweep report: one statistics row per dataset (SPEC §7).

The benchmark tables say how well each method did; this section says on what: size,
density, clustering, label homophily and label-set sizes of every dataset the sweep's
``ml_node_cls`` runs used. Rows come from :func:`graphnetz.analysis.dataset_statistics`
on the dataset reloaded from each run record's own config.

I/O edge (it loads data); call it from the report writer, e.g.
``write_text(out / "datasets.md", dataset_section_from_run_dirs(dirs))``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import OmegaConf

from graphnetz.analysis import dataset_statistics, statistics_table, table_markdown
from graphnetz.data.loading import accepts_seed, load_dataset
from graphnetz.report.records import find_result_files
from graphnetz.tasks.multilabel_metrics import prior_macro_ap
from graphnetz.tasks.node_tasks import node_split

TASK_TYPE = "ml_node_cls"


def _resolved(config: Mapping[str, Any], key: str) -> Any:
    """``config[key]`` with interpolations resolved against the whole run config.

    Run records keep the config unresolved (``${oc.env:...}``, names built from loader
    values), so it is resolved here the way the run itself saw it.
    """
    node = OmegaConf.select(OmegaConf.create(dict(config)), key)
    return OmegaConf.to_container(node, resolve=True) if node is not None else None


def _dataset_key(record: Mapping[str, Any]) -> tuple[str, str, Any]:
    config = record["config"]
    loader = _resolved(config, "dataset.loader")
    if loader is None:
        raise ValueError("its config has no dataset.loader")
    name = record.get("dataset") or _resolved(config, "dataset.name")
    seeded = accepts_seed(loader)
    return str(name), json.dumps(loader, sort_keys=True), record.get("seed") if seeded else None


def dataset_rows(
    records: Iterable[Mapping[str, Any]],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Statistics rows of the datasets used by the ``ml_node_cls`` records, and notes.

    One row per (dataset name, loader config); records of other task types are ignored.
    Each row also has ``chance``: the run seeds and the mean test macro AP of a constant
    score over their splits.
    ``data_dir`` / ``mirror`` default to each record's ``paths.data_dir`` /
    ``paths.data_mirror`` (relative paths are taken from the current directory).
    A loader that takes a seed (synthetic graphs, resampled per run) is described by its
    run with the smallest seed, and a note says so. A dataset that cannot be loaded is
    listed in the notes with the reason, never raised.
    """
    chosen: dict[tuple[str, str], tuple[Any, Mapping[str, Any]]] = {}
    run_seeds: dict[tuple[str, str], set[int]] = {}
    notes: list[str] = []
    for record in records:
        if record.get("task_type") != TASK_TYPE:
            continue
        try:
            name, loader, seed = _dataset_key(record)
        except Exception as err:  # a malformed record is reported, not fatal
            notes.append(
                f"run {record.get('run_dir') or record.get('task')}: "
                f"no dataset config ({type(err).__name__}: {err})"
            )
            continue
        if isinstance(record.get("seed"), int):
            run_seeds.setdefault((name, loader), set()).add(record["seed"])
        previous = chosen.get((name, loader))
        if previous is None or (seed is not None and seed < previous[0]):
            chosen[(name, loader)] = (seed, record)

    names = [name for name, _ in chosen]
    rows = []
    for (name, loader), (seed, record) in sorted(chosen.items()):
        label = name if names.count(name) == 1 else f"{name} [{loader}]"
        paths = _resolved(record["config"], "paths") or {}
        root = data_dir if data_dir is not None else paths.get("data_dir", "data")
        source = mirror if mirror is not None else paths.get("data_mirror")
        try:
            data = _load(json.loads(loader), root, source, seed)
            row = dataset_statistics(data, label)
            # a generated graph differs per seed: its chance level is that of the seed shown
            seeds = sorted({seed} if seed is not None else run_seeds.get((name, loader), {0}))
            row["chance"] = _chance_level(data, seeds, _resolved(record["config"], "dataset.split"))
            rows.append(row)
        except Exception as err:  # one unavailable dataset must not hide the others
            notes.append(f"{label}: not loaded ({type(err).__name__}: {err})")
            continue
        if seed is not None:
            notes.append(f"{label}: generated per run seed; statistics of seed {seed}")
    return rows, notes


def _chance_level(data, seeds: list[int], split: dict | None) -> dict[str, Any]:
    """Test macro AP of a constant score, mean over the test splits of ``seeds``."""
    values = [
        prior_macro_ap(part.y[part.test_mask])
        for part in (node_split(data, s, split, TASK_TYPE)[0] for s in seeds)
    ]
    return {"seeds": seeds, "macro_ap": sum(values) / len(values)}


def _chance_table(rows: list[dict[str, Any]]) -> str:
    table = pd.DataFrame(
        [
            (
                r["dataset"],
                ", ".join(map(str, r["chance"]["seeds"])),
                f"{r['chance']['macro_ap']:.4f}",
            )
            for r in rows
        ],
        columns=["dataset", "run seeds", "constant-score test macro AP"],
    )
    return table_markdown(table)


def _load(loader: dict, root, mirror, seed: int | None):
    dataset = load_dataset(loader, root, mirror, seed=seed)
    return dataset if hasattr(dataset, "edge_index") else dataset[0]


def dataset_section(
    records: Iterable[Mapping[str, Any]],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
    heading: str = "## Datasets",
) -> str:
    """Markdown section with the statistics table of the sweep's multi-label datasets.

    Empty string when no record is an ``ml_node_cls`` run, so a report writer can
    append it unconditionally. Columns follow ``graphnetz.analysis.STAT_COLUMNS``.
    """
    rows, notes = dataset_rows(records, data_dir, mirror)
    if not rows and not notes:
        return ""
    lines = [
        heading,
        "",
        "Multi-label datasets of this sweep (SPEC §7): edges are undirected pairs; "
        "label homophily is the mean Jaccard similarity of the label sets at the ends "
        "of an edge; labels_* are statistics of labels per node.",
        "",
    ]
    if rows:
        lines.append(table_markdown(statistics_table(rows)))
        lines += [
            "Chance level of the primary metric: the test macro AP of a constant score "
            "(each label's AP is then its positive rate in the test split), mean over "
            "the splits of the runs' seeds. A method near it learned nothing about the "
            "labels.",
            "",
            _chance_table(rows),
        ]
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines).rstrip("\n") + "\n"


def dataset_section_from_run_dirs(
    paths: Iterable[str | Path],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
) -> str:
    """:func:`dataset_section` over every readable ``result.json`` under ``paths``."""
    records = []
    for path in find_result_files(paths):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # the statistical report already lists unreadable records
    return dataset_section(records, data_dir, mirror)
