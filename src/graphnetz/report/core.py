"""``BenchmarkReport``: raw task × model × seed results, their analysis and its outputs.

The statistics are computed once per set of settings into a :class:`ReportAnalysis`
(:meth:`BenchmarkReport.analysis`); the writers (Markdown, LaTeX, JSON, figures) are
functions of it.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from graphnetz.atomic import write_text
from graphnetz.task_types import DESCRIBED_TASK_TYPES

from . import across_tasks
from . import records as rec_io
from .analysis import CriticalDifference, RankAnalysis, ReportAnalysis, ReportSettings
from .compute import analyse, first_seen, long_table, select
from .figures import cd_diagram, write_figures
from .latex import write_tables
from .markdown import render
from .serialize import analysis_dict, dumps
from .settings import (
    CI_METHODS,
    PAIRWISE_METHODS,
    Setting,
    choice,
    positive_int,
    valid_alpha,
    valid_ci,
    valid_cliques,
    valid_margin,
    valid_metric,
    valid_missing,
    valid_pairwise_method,
)
from .tuning import summarize_tuning
from .within_task import pairwise_frame, power_frame, summary_frame
from .writer import results_csv, write_report

REPORT_SCHEMA_VERSION = 1  # of report.json (run records have their own)


def _confidence_level(level: float) -> float:
    """A confidence level in (0, 1), as the reference package's ``summary(ci=0.95)``."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(
            f"ci={level!r}: a confidence level lies in (0, 1), e.g. 0.95; or give the "
            f"interval method, one of {list(CI_METHODS)}"
        )
    return float(level)


class BenchmarkReport:
    """Statistical report over a long table of per-seed results.

    Settings (attributes, validated on assignment): ``metric`` (None = each task's primary
    test metric; ``"accuracy"`` = test accuracy; ``"val:accuracy"`` = another split),
    ``alpha``, ``ci`` ("t" | "bootstrap"), ``bootstrap_seed``, ``n_resamples`` and
    ``pairwise_method`` ("t" | "wilcoxon"), which drives significance marks, LaTeX and
    figures at once; ``equivalence_margin`` (None: no equivalence/Bayesian section; else
    the margin in the metric's units), ``cliques`` ("nemenyi" | "wilcoxon-holm"),
    ``missing`` ("drop-models" | "drop-tasks": how the rank table handles absent cells),
    ``n_task_resamples`` (bootstrap over tasks) and ``n_posterior_samples`` (Bayesian
    test); ``bootstrap_seed`` seeds every resampling.

    ``pairing`` maps (task, model, seed) to the run's pairing fingerprint (run records
    carry one); seed-pairs whose fingerprints differ are reported as unpaired.

    ``datasets`` are the Datasets section's entries (:func:`records.dataset_entry`); the
    raw results (``data``) are fixed once constructed. Every statistic comes from
    :meth:`analysis`, computed once and recomputed only when a setting (or ``datasets``)
    changes; the methods below hand out copies of its frames.
    """

    def __init__(
        self,
        data: pd.DataFrame,
        primary_metrics: Mapping[str, str] | None = None,
        *,
        provenance: Mapping[str, Any] | None = None,
        skipped: Iterable[Mapping[str, Any]] = (),
        failed: Iterable[Mapping[str, Any]] = (),
        unreadable: Iterable[Mapping[str, Any]] = (),
        datasets: Iterable[Mapping[str, Any]] = (),
        pairing: Iterable[Mapping[str, Any]] = (),
        metric: str | None = None,
        alpha: float = 0.05,
        ci: str = "t",
        bootstrap_seed: int = 0,
        n_resamples: int = 10_000,
        pairwise_method: str = "t",
        equivalence_margin: float | None = None,
        cliques: str = "nemenyi",
        missing: str = "drop-models",
        n_task_resamples: int = 2_000,
        n_posterior_samples: int = 50_000,
    ) -> None:
        self.data, self.duplicates = long_table(data)
        if self.duplicates:
            warnings.warn(
                f"{len(self.duplicates)} duplicate (task, model, seed, metric) result(s); "
                "the first occurrence is kept",
                stacklevel=2,
            )
        self.primary_metrics = dict(primary_metrics or {})
        for task, group in self.data.groupby("task", sort=False):
            self.primary_metrics.setdefault(task, group["metric"].iloc[0])
        self.provenance = dict(provenance or {})
        self.skipped = [dict(r) for r in skipped]
        self.failed = [dict(r) for r in failed]
        self.unreadable = [dict(r) for r in unreadable]
        self.pairing = [dict(p) for p in pairing]
        self._analysis: ReportAnalysis | None = None
        self.datasets = datasets
        self.metric = metric
        self.alpha = alpha
        self.ci = ci
        self.bootstrap_seed = int(bootstrap_seed)
        self.n_resamples = int(n_resamples)
        self.pairwise_method = pairwise_method
        self.equivalence_margin = equivalence_margin
        self.cliques = cliques
        self.missing = missing
        self.n_task_resamples = n_task_resamples
        self.n_posterior_samples = n_posterior_samples

    # ------------------------------------------------------------------ settings
    metric = Setting(valid_metric)
    alpha = Setting(valid_alpha)
    ci = Setting(valid_ci)
    pairwise_method = Setting(valid_pairwise_method)
    equivalence_margin = Setting(valid_margin)
    cliques = Setting(valid_cliques)
    missing = Setting(valid_missing)
    n_task_resamples = Setting(positive_int("n_task_resamples"))
    n_posterior_samples = Setting(positive_int("n_posterior_samples"))

    @property
    def datasets(self) -> tuple[dict[str, Any], ...]:
        return self._datasets

    @datasets.setter
    def datasets(self, entries: Iterable[Mapping[str, Any]]) -> None:
        self._datasets = tuple(dict(e) for e in entries)
        self._analysis = None

    def settings(self) -> dict[str, Any]:
        return self._settings().as_dict()

    def _settings(self) -> ReportSettings:
        return ReportSettings(**{k: getattr(self, k) for k in ReportSettings.names()})

    # -------------------------------------------------------------- constructors
    @classmethod
    def _from_collected(cls, acc: rec_io.Collected, provenance: dict, **settings: Any):
        provenance = {
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "versions": {k: sorted(v) for k, v in sorted(acc.versions.items())},
            "collapsed_duplicates": acc.n_collapsed,  # same identity, same result: read once
            # a rerun's worse record beside the run's counted one (not a run of its own)
            "superseded_reruns": [
                {k: e[k] for k in ("task", "model", "seed", "path", "status", "by") if k in e}
                for e in acc.superseded
            ],
            "tuning": summarize_tuning(acc.tunings),  # which runs were tuned, and how
            **provenance,
        }
        return cls(
            acc.frame(),
            acc.primary_metrics,
            provenance=provenance,
            skipped=acc.skipped,
            failed=acc.failed,
            unreadable=acc.unreadable,
            datasets=acc.datasets,
            pairing=acc.pairing,
            **settings,
        )

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], **settings: Any) -> BenchmarkReport:
        """From run-record dicts (the ``result.json`` format of the training pipeline)."""
        return cls._from_collected(
            rec_io.collect_records(records), {"source": "records"}, **settings
        )

    @classmethod
    def from_run_dirs(cls, paths: Iterable[str | Path], **settings: Any) -> BenchmarkReport:
        """From every ``result.json`` found recursively under ``paths``."""
        paths = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
        acc = rec_io.collect_run_dirs(paths)
        return cls._from_collected(acc, {"source": "run_dirs", "paths": paths}, **settings)

    @classmethod
    def from_csv(cls, path: str | Path, **settings: Any) -> BenchmarkReport:
        """From a long CSV ``task,model,seed,metric,value[,direction]``."""
        acc = rec_io.collect_csv(path)
        return cls._from_collected(acc, {"source": "csv", "paths": [str(path)]}, **settings)

    @classmethod
    def from_json(cls, path: str | Path, **settings: Any) -> BenchmarkReport:
        """Reload a report written by :meth:`to_json` (raw values, provenance, settings)."""
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        version = doc.get("schema_version")
        if version != REPORT_SCHEMA_VERSION:
            raise ValueError(
                f"{path}: unsupported schema_version {version!r} (supported: {REPORT_SCHEMA_VERSION})"
            )
        data = pd.DataFrame(doc["results"], columns=rec_io.COLUMNS)
        runs = doc.get("runs", {})
        return cls(
            data,
            doc.get("primary_metrics"),
            provenance=doc.get("provenance"),
            skipped=runs.get("skipped", ()),
            failed=runs.get("failed", ()),
            unreadable=runs.get("unreadable", ()),
            datasets=doc.get("datasets", ()),
            pairing=doc.get("pairing", ()),
            **{**doc.get("settings", {}), **settings},
        )

    # ------------------------------------------------------------------ values
    @property
    def tasks(self) -> list[str]:
        return first_seen(self.selected()["task"])

    @property
    def models(self) -> list[str]:
        return first_seen(self.selected()["model"])

    def excluded_tasks(self) -> list[str]:
        """Tasks without the chosen ``metric`` (empty when using each task's primary metric)."""
        kept = set(self.selected()["task"])
        return [t for t in first_seen(self.data["task"]) if t not in kept]

    def selected(self) -> pd.DataFrame:
        """The analysed values: one row per (task, model, seed) for the active metric."""
        return select(self.data, self.primary_metrics, self.metric)

    def direction(self, task: str) -> str:
        d = self.selected()
        return str(d.loc[d["task"] == task, "direction"].iloc[0])

    # ---------------------------------------------------------------- analysis
    def analysis(self) -> ReportAnalysis:
        """Every statistic of the report under the current settings (cached)."""
        settings = self._settings()
        if self._analysis is None or self._analysis.settings != settings:
            self._analysis = self._analyse(settings)
        return self._analysis

    def _analyse(self, settings: ReportSettings) -> ReportAnalysis:
        runs = {"skipped": self.skipped, "failed": self.failed, "unreadable": self.unreadable}
        return analyse(
            self.data,
            self.primary_metrics,
            settings,
            datasets=self.datasets,
            runs=runs,
            n_duplicates=len(self.duplicates),
            provenance=self.provenance,
            pairing=self._pairing(),
        )

    def _pairing(self) -> dict[tuple[str, str, int], Any]:
        return {(p["task"], p["model"], int(p["seed"])): p["pairing"] for p in self.pairing}

    def _warned(self) -> ReportAnalysis:
        """The analysis, warning (at the caller's caller) about what the ranking left out or
        refused and about unpaired seed-pairs."""
        analysis = self.analysis()
        ranks = analysis.ranks
        if ranks.dropped_models:
            warnings.warn(
                f"models not present on every task are left out of the rank table: "
                f"{ranks.dropped_models}",
                stacklevel=3,
            )
        if ranks.dropped_tasks:
            warnings.warn(
                f"tasks lacking some model are left out of the rank table: {ranks.dropped_tasks}",
                stacklevel=3,
            )
        if len(analysis.tasks) >= 2 and not ranks.applicable:
            warnings.warn(f"no ranking across tasks: {ranks.reason}", stacklevel=3)
        if not analysis.unpaired.empty:
            warnings.warn(
                f"{len(analysis.unpaired)} seed-pair(s) are not paired (their runs' pairing "
                "fingerprints differ) and are left out of the paired tests",
                stacklevel=3,
            )
        return analysis

    def summary(self, ci: str | float | None = None, method: str | None = None) -> pd.DataFrame:
        """Per (task, model): n, mean, std, CI half-width h, low, high (NaN when n = 1).

        ``ci`` is the interval method ("t" | "bootstrap", default ``self.ci``) at level
        1 − ``alpha``; or, as in the reference package, the confidence level itself
        (``ci=0.95``), the method then given as ``method``."""
        level = None
        if isinstance(ci, float | int) and not isinstance(ci, bool):
            level, ci = _confidence_level(ci), None
        elif method is not None and ci is not None:
            raise ValueError(
                f"give the interval method once: ci={ci!r} or method={method!r}, not both"
            )
        ci = choice("ci", ci or method or self.ci, CI_METHODS)
        alpha = self.alpha if level is None else round(1.0 - level, 12)
        if ci == self.ci and alpha == self.alpha:
            return self.analysis().summary.copy()
        return summary_frame(self.selected(), alpha, ci, self.n_resamples, self.bootstrap_seed)

    def pairwise(
        self, method: str | float | None = None, alpha: float | str | None = None
    ) -> pd.DataFrame:
        """Every model pair within each task on seed-aligned differences d = A − B
        (:func:`within_task.pairwise_frame`); ``method`` defaults to ``pairwise_method``,
        ``alpha`` (the level of ``significant``) to ``self.alpha``. The reference package's
        order ``pairwise(alpha, method)`` is read too: a number first is ``alpha``."""
        if isinstance(method, float | int) and not isinstance(method, bool):
            method, alpha = alpha, method
        method = choice("pairwise_method", method or self.pairwise_method, PAIRWISE_METHODS)
        alpha = self.alpha if alpha is None else valid_alpha(self, alpha)
        if method == self.pairwise_method and alpha == self.alpha:
            return self.analysis().pairwise.copy()
        return pairwise_frame(self.selected(), alpha, method, self._pairing())

    def friedman(self, alpha: float | None = None) -> RankAnalysis:
        """Rank table over tasks (models present on every task only) and the Friedman test;
        ``rejects`` and ``conclusion`` at ``alpha`` (default ``self.alpha``)."""
        ranks = self._warned().ranks
        if alpha is None or alpha == self.alpha:
            return ranks
        return dataclasses.replace(ranks, alpha=valid_alpha(self, alpha))

    def critical_difference(self, alpha: float | None = None) -> CriticalDifference:
        """Nemenyi CD, cliques of models closer than CD, and pairwise Nemenyi p-values, at
        ``alpha`` (default ``self.alpha``)."""
        cd = self._warned().critical_difference
        if alpha is None or alpha == self.alpha:
            return cd
        ranks = dataclasses.replace(cd.ranks, alpha=valid_alpha(self, alpha))
        return across_tasks.critical_difference(ranks, self.selected(), self.cliques)

    def plot_critical_difference(
        self, *, alpha: float | None = None, title: str | None = None
    ) -> tuple[plt.Figure, plt.Axes]:
        """The Demšar critical-difference diagram of :meth:`critical_difference` as
        ``(figure, axes)`` (the reference package's method; ``plot`` writes it to files).
        Refused, with the reason, when fewer than 2 tasks or 2 common models are ranked."""
        cd = self.critical_difference(alpha)
        if not cd.applicable:
            raise ValueError(f"no critical-difference diagram: {cd.ranks.reason}")
        fig = cd_diagram(cd)
        ax = fig.axes[0]
        if title is not None:
            ax.set_title(title)
        return fig, ax

    def cost(self) -> pd.DataFrame:
        """Per analysed (task, model): runs, mean wall time per run, mean epochs run, mean
        seconds per epoch and total wall time (:func:`cost.cost_frame`)."""
        return self.analysis().cost.copy()

    def power(self, delta: float | None = None, power: float = 0.8) -> pd.DataFrame:
        """Seed-count advisor per pair (:func:`within_task.power_frame`): ``mdd`` at the
        current seeds, ``seeds_needed`` to detect ``delta`` (default: the observed |Δμ|)."""
        analysis = self.analysis()
        if delta is None and power == 0.8:
            return analysis.power.copy()
        return power_frame(analysis.pairwise, self.alpha, delta, power)

    # ------------------------------------------------------------------- output
    def to_dict(self, include_analysis: bool = False) -> dict[str, Any]:
        """Raw results, settings, provenance, runs not analysed and the Datasets section's
        entries (+ the computed analysis if asked): the content of ``report.json``."""
        described = [e for e in self.datasets if e.get("task_type") in DESCRIBED_TASK_TYPES]
        doc: dict[str, Any] = {
            "schema_version": REPORT_SCHEMA_VERSION,
            "kind": "graphnetz.benchmark_report",
            "settings": self.settings(),
            "primary_metrics": self.primary_metrics,
            "provenance": self.provenance,
            "runs": {"skipped": self.skipped, "failed": self.failed, "unreadable": self.unreadable},
            "results": self.data.to_dict("records"),
            "datasets": [{k: v for k, v in e.items() if k != "config"} for e in described],
            "pairing": self.pairing,
        }
        if include_analysis:
            doc["analysis"] = analysis_dict(self._warned())
        return doc

    def to_json(self, path: str | Path, include_analysis: bool = False) -> Path:
        """Schema-versioned JSON of the raw results (+ computed analysis if asked); atomic."""
        return write_text(path, dumps(self.to_dict(include_analysis)))

    def to_markdown(self, figures: str | None = None) -> str:
        return render(self._warned(), figures)

    def to_latex(self, directory: str | Path) -> list[Path]:
        return write_tables(self._warned(), directory)

    def plot(self, directory: str | Path) -> list[Path]:
        return write_figures(self._warned(), directory)

    def write(self, directory: str | Path) -> Path:
        """Write report.md, report.json, results.csv, summary.csv, tables/ and figures/."""
        analysis = self._warned()
        document = self.to_dict(include_analysis=True)
        return write_report(
            directory, analysis, document, results_csv(self.data, self.primary_metrics)
        )

    def __repr__(self) -> str:
        return (
            f"BenchmarkReport({len(self.tasks)} tasks, {len(self.models)} models, "
            f"{len(self.selected())} values, ci={self.ci!r}, pairwise_method={self.pairwise_method!r})"
        )
