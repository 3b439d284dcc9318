"""Every output file of the report into one folder, from the analysis and the raw results."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from graphnetz.atomic import write_text

from .analysis import ReportAnalysis
from .cells import FigureLinks
from .figures import write_figures
from .latex import write_tables
from .markdown import render
from .serialize import dumps


def write_report(
    directory: str | Path,
    analysis: ReportAnalysis,
    document: Mapping[str, Any],
    results: str,
) -> Path:
    """figures/*.{png,pdf}, tables/*.tex, results.csv (``results``, see :func:`results_csv`),
    summary.csv, pairwise.csv, equivalence.csv and bayes_across_tasks.csv (with a margin),
    rank_stability.csv and rank_probabilities.csv (when ranked), unpaired.csv (when some
    seed-pair is not paired), report.json (``document``: the raw results with the
    analysis) and report.md.

    Returns the path of ``report.md``. Everything is first written to a folder beside
    ``directory``, then moved in (report.md last); the files of an earlier report that
    this one does not write again are removed, so a folder never mixes two reports. A
    failure leaves the earlier report as it was. Other files in the folder are left alone.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"report folder {str(directory)!r} is a file")
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.writing-", dir=directory.parent))
    try:
        _write_files(staging, analysis, document, results)
        _move_in(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory / "report.md"


def _write_files(
    directory: Path, analysis: ReportAnalysis, document: Mapping[str, Any], results: str
) -> None:
    drawn = write_figures(analysis, directory / "figures")
    write_tables(analysis, directory / "tables")
    write_text(directory / "results.csv", results)
    write_text(directory / "summary.csv", analysis.summary.to_csv(index=False))
    for name, frame in analysis_tables(analysis).items():
        write_text(directory / f"{name}.csv", frame.to_csv(index=name == "rank_probabilities"))
    write_text(directory / "report.json", dumps(dict(document)))
    links = FigureLinks("figures", frozenset(p.stem for p in drawn))
    write_text(directory / "report.md", render(analysis, figures=links))


def _move_in(staging: Path, directory: Path) -> None:
    new = {p.relative_to(staging) for p in staging.rglob("*") if p.is_file()}
    if directory.is_dir():
        for old in report_files(directory):
            if old.relative_to(directory) not in new:
                old.unlink()
    for rel in sorted(new, key=lambda r: r == Path("report.md")):  # report.md last
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, target)


_TABLES = ("summary", "pairwise", "ranks", "equivalence", "robustness")
_CSVS = ("results", "summary", "pairwise", "equivalence", "bayes_across_tasks")
_CSVS += ("rank_stability", "rank_probabilities", "unpaired")
_FIGURES = re.compile(r"(task_.+|pairwise_.+|bayes_.+|dashboard|cd_diagram|seed_advisor)")


def report_files(directory: Path) -> list[Path]:
    """The files in ``directory`` that a report writes (of any report, not only this one)."""
    names = ["report.md", "report.json", *(f"{n}.csv" for n in _CSVS)]
    names += [f"tables/{n}.tex" for n in _TABLES]
    found = [directory / n for n in names if (directory / n).is_file()]
    figures = directory / "figures"
    if figures.is_dir():
        found += [
            p
            for p in figures.iterdir()
            if p.is_file() and p.suffix in (".png", ".pdf") and _FIGURES.fullmatch(p.stem)
        ]
    return found


def results_csv(data: pd.DataFrame, primary_metrics: Mapping[str, str]) -> str:
    """The long table with each task's primary metric listed first, so that reading it back
    (``from_csv`` takes a task's first metric as primary) analyses the same metric."""
    primary = data["metric"] == data["task"].map(primary_metrics)
    task_order = data["task"].map({t: i for i, t in enumerate(dict.fromkeys(data["task"]))})
    order = data.assign(_task=task_order, _other=~primary).sort_values(
        ["_task", "_other"], kind="stable"
    )
    return order.drop(columns=["_task", "_other"]).to_csv(index=False)


def analysis_tables(analysis: ReportAnalysis) -> dict[str, pd.DataFrame]:
    """The analysis' per-pair tables that have content, by CSV name."""
    rob = analysis.robustness
    tables = {
        "pairwise": analysis.pairwise,
        "equivalence": analysis.equivalence,
        "bayes_across_tasks": analysis.bayes_across,
        "rank_stability": rob.pairs,
        "rank_probabilities": rob.rank_probabilities.rename_axis("model"),
        "unpaired": analysis.unpaired,
    }
    return {name: frame for name, frame in tables.items() if not frame.empty}
