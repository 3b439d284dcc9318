"""Every output file of the report into one folder, from the analysis and the raw results."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
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
    leaves the earlier report as it was: a target of the wrong kind (a file named
    ``tables``, a folder named ``report.md``) is refused before anything moves, and a move
    that fails midway is undone (see :func:`_move_in`). Files no report wrote are kept.
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
    """Move the staged files into ``directory`` as one step: every target is checked
    first (a file where a folder goes, or a folder where a file goes, is refused before
    anything moves), each file it replaces, and each earlier report file it drops, is
    set aside first; if a move fails, what was moved is taken out and what was set aside
    put back, so the folder holds the earlier report or the new one, never a mix."""
    new = sorted(
        (p.relative_to(staging) for p in staging.rglob("*") if p.is_file()),
        key=lambda r: (r == Path("report.md"), r.as_posix()),  # report.md last
    )
    _check_targets(directory, [*new, Path(MANIFEST)])
    earlier = earlier_report_files(directory)
    stale = sorted(set(earlier) - {r.as_posix() for r in new})
    aside = Path(tempfile.mkdtemp(prefix=".replaced-", dir=directory))
    moved: list[Path] = []  # new files now in the folder
    kept: list[Path] = []  # earlier files set aside
    made: list[Path] = []  # folders made for the new files

    def set_aside(rel: Path) -> None:
        (aside / rel).parent.mkdir(parents=True, exist_ok=True)
        _rename(directory / rel, aside / rel)
        kept.append(rel)

    try:
        for rel in new:
            target = directory / rel
            for folder in reversed(target.parents):
                if folder != directory and folder.is_relative_to(directory):
                    if not folder.is_dir():
                        folder.mkdir()
                        made.append(folder)
            if target.is_file() or target.is_symlink():
                set_aside(rel)
            moved.append(rel)  # before the move: a copy cut short is removed too
            shutil.move(staging / rel, target)  # a rename; a copy where figures/ is elsewhere
        for rel in map(Path, stale):
            if (directory / rel).is_file():
                set_aside(rel)
        write_text(directory / MANIFEST, "".join(f"{r.as_posix()}\n" for r in new))
    except BaseException:
        _restore(directory, aside, moved, kept, made)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _rename(source: Path, target: Path) -> None:
    """A rename, or a move where ``target`` is on another file system."""
    try:
        os.replace(source, target)
    except OSError:
        shutil.move(source, target)


def _check_targets(directory: Path, files: list[Path]) -> None:
    """Refuse (before anything moves) a target that is a folder where a file goes, or a
    path that is a file where a folder goes, naming it."""
    folders = {folder for rel in files for folder in rel.parents if folder != Path(".")}
    for folder in sorted(folders):
        path = directory / folder
        if (path.exists() or path.is_symlink()) and not path.is_dir():
            raise NotADirectoryError(
                f"{str(path)!r} is a file where the report writes a folder; "
                "move it away or write the report elsewhere (--out)"
            )
    for rel in files:
        path = directory / rel
        if path.is_dir() or ((path.exists() or path.is_symlink()) and not path.is_file()):
            raise IsADirectoryError(
                f"{str(path)!r} is a folder where the report writes a file; "
                "move it away or write the report elsewhere (--out)"
            )


def _restore(directory: Path, aside: Path, moved: list[Path], kept: list[Path], made) -> None:
    """Undo :func:`_move_in`'s moves: the new files out, the earlier ones back, the
    folders it made removed; what cannot be put back stays in ``aside`` (named)."""
    failed = []
    for rel in reversed(moved):
        try:
            (directory / rel).unlink(missing_ok=True)
        except OSError:
            failed.append(rel)
    for rel in reversed(kept):
        try:
            _rename(aside / rel, directory / rel)
        except OSError:
            failed.append(rel)
    for folder in reversed(made):
        try:
            folder.rmdir()
        except OSError:
            pass
    if failed:
        names = ", ".join(r.as_posix() for r in failed)
        print(f"warning: the earlier report's files {names} are in {aside}", file=sys.stderr)
    else:
        shutil.rmtree(aside, ignore_errors=True)


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
