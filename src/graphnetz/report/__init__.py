"""The statistical report: ``BenchmarkReport``, its analysis and writers (Markdown, JSON,
LaTeX, figures)."""

from .analysis import (
    CriticalDifference,
    DatasetSection,
    RankAnalysis,
    RankRobustness,
    ReportAnalysis,
    ReportSettings,
)
from .core import REPORT_SCHEMA_VERSION, BenchmarkReport
from .records import infer_direction
from .settings import CI_METHODS, CLIQUE_METHODS, MISSING_RULES, PAIRWISE_METHODS

__all__ = [
    "CI_METHODS",
    "CLIQUE_METHODS",
    "MISSING_RULES",
    "PAIRWISE_METHODS",
    "REPORT_SCHEMA_VERSION",
    "BenchmarkReport",
    "CriticalDifference",
    "DatasetSection",
    "RankAnalysis",
    "RankRobustness",
    "ReportAnalysis",
    "ReportSettings",
    "infer_direction",
]
