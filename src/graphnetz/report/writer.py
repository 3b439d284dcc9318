"""Every output file of the report into one folder, from the analysis and the raw results."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from graphnetz.atomic import write_text

from .analysis import ReportAnalysis
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
    analysis) and report.md, in that order.

    Returns the path of ``report.md``. Every file is written atomically.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    write_figures(analysis, directory / "figures")
    write_tables(analysis, directory / "tables")
    write_text(directory / "results.csv", results)
    write_text(directory / "summary.csv", analysis.summary.to_csv(index=False))
    for name, frame in analysis_tables(analysis).items():
        write_text(directory / f"{name}.csv", frame.to_csv(index=name == "rank_probabilities"))
    write_text(directory / "report.json", dumps(dict(document)))
    return write_text(directory / "report.md", render(analysis, figures="figures"))


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
