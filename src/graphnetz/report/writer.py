"""``BenchmarkReport.write``: every output file of the report into one folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from graphnetz.atomic import write_text

if TYPE_CHECKING:
    from .core import BenchmarkReport


def write_report(report: BenchmarkReport, directory: str | Path) -> Path:
    """report.md, report.json, results.csv, summary.csv, tables/*.tex, figures/*.{png,pdf}.

    Returns the path of ``report.md``. Every file is written atomically.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    report.plot(directory / "figures")
    report.to_latex(directory / "tables")
    write_text(directory / "results.csv", results_csv(report))
    write_text(directory / "summary.csv", report.summary().to_csv(index=False))
    report.to_json(directory / "report.json", include_analysis=True)
    return write_text(directory / "report.md", report.to_markdown(figures="figures"))


def results_csv(report: BenchmarkReport) -> str:
    """The long table with each task's primary metric listed first, so that reading it back
    (``from_csv`` takes a task's first metric as primary) analyses the same metric."""
    data = report.data
    primary = data["metric"] == data["task"].map(report.primary_metrics)
    task_order = data["task"].map({t: i for i, t in enumerate(dict.fromkeys(data["task"]))})
    order = data.assign(_task=task_order, _other=~primary).sort_values(
        ["_task", "_other"], kind="stable"
    )
    return order.drop(columns=["_task", "_other"]).to_csv(index=False)
