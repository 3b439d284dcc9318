"""The statistical report: ``BenchmarkReport`` and its writers (Markdown, JSON, LaTeX, figures)."""

from .analysis import CriticalDifference, RankAnalysis
from .core import CI_METHODS, PAIRWISE_METHODS, SCHEMA_VERSION, BenchmarkReport
from .records import infer_direction

__all__ = [
    "CI_METHODS",
    "PAIRWISE_METHODS",
    "SCHEMA_VERSION",
    "BenchmarkReport",
    "CriticalDifference",
    "RankAnalysis",
    "infer_direction",
]
