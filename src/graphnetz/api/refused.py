"""Names of the reference package (graphnetz 0.2.0) that the pipeline has no equivalent
for. They exist so that code importing them gets, when it uses them, an error naming what
to use instead rather than an ImportError."""

from __future__ import annotations

from typing import Any, NoReturn


def SearchSpace(*args: Any, **kwargs: Any) -> NoReturn:  # noqa: N802  (the reference's name)
    """Refused: ``run_benchmark`` runs no inner hyperparameter search."""
    raise NotImplementedError(
        "SearchSpace (the reference package's inner hyperparameter search) has no "
        "equivalent here: tune one task x model with `python -m graphnetz tune` "
        "(docs/tuning.md), then give the selected values to run_benchmark as settings "
        "(e.g. **{'task.lr': 5e-3}) or run the seed sweep with +tuned=<study>"
    )


def plot_benchmark(*args: Any, **kwargs: Any) -> NoReturn:
    """Refused: the report draws its own figures."""
    raise NotImplementedError(
        "plot_benchmark (the reference package's grouped bar chart) has no equivalent "
        "here: report.plot(directory) writes the per-task CI charts, the dashboard and "
        "the CD diagram, report.plot_critical_difference() returns the CD diagram as "
        "(figure, axes), and report.write(directory) writes every figure with the report"
    )


__all__ = ["SearchSpace", "plot_benchmark"]
