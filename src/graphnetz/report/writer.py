"""Every output file of the report into one folder, from the analysis and the raw results."""

from __future__ import annotations

import json
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

    Returns the path of ``report.md``. Everything is first written to a staging folder
    inside ``directory``, then moved in (report.md last), and the list of written files is
    kept in :data:`MANIFEST`; the files an earlier report listed there that this one does
    not write again are then removed, so a folder never mixes two reports. A failure
    before the moves leaves the earlier report as it was. Files no report wrote are kept.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise NotADirectoryError(f"report folder {str(directory)!r} is a file")
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".writing-", dir=directory))
    try:
        _write_files(staging, analysis, document, results)
        _move_in(staging, directory)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory / "report.md"


#: The files of the last report written into a folder, one relative path per line.
MANIFEST = ".graphnetz-report-files"


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
    new = sorted(
        (p.relative_to(staging) for p in staging.rglob("*") if p.is_file()),
        key=lambda r: (r == Path("report.md"), r.as_posix()),  # report.md last
    )
    earlier = earlier_report_files(directory)
    for rel in new:
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staging / rel, target)  # a rename; a copy where figures/ is elsewhere
    for rel in sorted(set(earlier) - {r.as_posix() for r in new}):
        (directory / rel).unlink(missing_ok=True)
    write_text(directory / MANIFEST, "".join(f"{r.as_posix()}\n" for r in new))


def earlier_report_files(directory: Path) -> list[str]:
    """The files the last report written into ``directory`` listed in its manifest; for a
    report written before manifests (a GraphNetz report.json is there), the files whose
    names a report writes; else none."""
    manifest = directory / MANIFEST
    if manifest.is_file():
        lines = manifest.read_text(encoding="utf-8").splitlines()
        inside = (Path(line) for line in lines if line)  # never a path out of the folder
        return [p.as_posix() for p in inside if not p.is_absolute() and ".." not in p.parts]
    if not _is_our_report(directory / "report.json"):
        return []
    return [p.relative_to(directory).as_posix() for p in report_files(directory)]


def holds_report(directory: str | Path) -> bool:
    """Whether ``directory`` holds a report written by GraphNetz (its manifest, or a
    report.json of ours from before manifests)."""
    directory = Path(directory)
    return (directory / MANIFEST).is_file() or _is_our_report(directory / "report.json")


def _is_our_report(path: Path) -> bool:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("kind") == REPORT_KIND
    except (OSError, ValueError, AttributeError):
        return False


_TABLES = ("summary", "pairwise", "ranks", "equivalence", "robustness")
_CSVS = ("results", "summary", "pairwise", "equivalence", "bayes_across_tasks")
_CSVS += ("rank_stability", "rank_probabilities", "unpaired")
_FIGURES = re.compile(r"(task_.+|pairwise_.+|bayes_.+|dashboard|cd_diagram|seed_advisor)")
REPORT_KIND = "graphnetz.benchmark_report"


def report_files(directory: Path) -> list[Path]:
    """The files in ``directory`` whose names a report writes (of any report)."""
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
