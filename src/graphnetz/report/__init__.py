"""The statistical report: ``BenchmarkReport``, its analysis and writers (Markdown, JSON,
LaTeX, figures)."""

from .analysis import (
    CriticalDifference,
    DatasetSection,
    RankAnalysis,
    ReportAnalysis,
    ReportSettings,
)
from .core import REPORT_SCHEMA_VERSION, BenchmarkReport
from .records import infer_direction
from .settings import CI_METHODS, PAIRWISE_METHODS

__all__ = [
    "CI_METHODS",
    "PAIRWISE_METHODS",
    "REPORT_SCHEMA_VERSION",
    "BenchmarkReport",
    "CriticalDifference",
    "DatasetSection",
    "RankAnalysis",
    "ReportAnalysis",
    "ReportSettings",
    "infer_direction",
]
