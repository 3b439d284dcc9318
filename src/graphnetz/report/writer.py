"""``BenchmarkReport.write``: every output file of the report into one folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .atomic import write_text

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
    write_text(directory / "results.csv",
               report.data.to_csv(index=False))  # fmt: skip
    write_text(directory / "summary.csv", report.summary().to_csv(index=False))
    report.to_json(directory / "report.json", include_analysis=True)
    return write_text(directory / "report.md", report.to_markdown(figures="figures"))
