"""Result objects of the report's analysis: the whole :class:`ReportAnalysis` and its
across-task parts (:class:`RankAnalysis`, :class:`CriticalDifference`,
:class:`RankRobustness`), the datasets section (:class:`DatasetSection`) and the settings
they were computed under.

Treat them as read-only: the report caches them, so a changed frame would change every
later output. The public methods of ``BenchmarkReport`` hand out copies of the frames.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import pandas as pd

from graphnetz.stats import FriedmanResult, cd_cliques


@dataclass(frozen=True)
class RankAnalysis:
    """Within-task ranks on complete blocks (every ranked model on every ranked task), and
    the Friedman test.

    ``missing`` says how incomplete blocks became complete: ``drop-models`` (models absent
    from some task are left out, ``dropped_models``) or ``drop-tasks`` (tasks lacking some
    model are left out, ``dropped_tasks``); ``missing_cells`` lists every absent
    (task, model). ``applicable`` is False (with ``reason``) when fewer than 2 tasks or
    2 models remain.
    """

    applicable: bool
    reason: str
    tasks: list[str]
    models: list[str]
    dropped_models: list[str]
    alpha: float
    missing: str = "drop-models"
    dropped_tasks: list[str] = field(default_factory=list)
    missing_cells: list[tuple[str, str]] = field(default_factory=list)
    rank_table: pd.DataFrame = field(default_factory=pd.DataFrame)
    mean_ranks: pd.Series = field(default_factory=lambda: pd.Series(dtype=float))
    friedman: FriedmanResult | None = None

    @property
    def rejects(self) -> bool | None:
        """Whether Friedman rejects "all models perform alike" at level alpha."""
        return None if self.friedman is None else bool(self.friedman.pvalue <= self.alpha)

    @property
    def conclusion(self) -> str:
        if not self.applicable:
            return f"Friedman/Nemenyi not applicable: {self.reason}."
        f = self.friedman
        stat = f"χ²_F = {f.statistic:.3f}, dof = {f.dof}, p = {f.pvalue:.4g}"
        if not self.rejects:
            return (
                f"The Friedman test does not reject equal performance ({stat} > α = {self.alpha}): "
                "no model is declared better."
            )
        return (
            f"The Friedman test rejects equal performance ({stat} ≤ α = {self.alpha}); "
            "by Nemenyi, models whose mean ranks differ by at least CD differ significantly."
        )


@dataclass(frozen=True)
class CriticalDifference:
    """Nemenyi critical difference, cliques and pairwise p.

    ``cliques`` are the groups no pair of which differs significantly, by
    ``clique_method``: ``nemenyi`` (mean ranks closer than CD) or ``wilcoxon-holm``
    (Holm-adjusted Wilcoxon signed-rank tests on per-task means, ``wilcoxon_p``).
    """

    ranks: RankAnalysis
    cd: float = float("nan")
    q_alpha: float = float("nan")
    cliques: list[tuple[str, ...]] = field(default_factory=list)
    nemenyi_p: pd.DataFrame = field(default_factory=pd.DataFrame)
    clique_method: str = "nemenyi"
    wilcoxon_p: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def applicable(self) -> bool:
        return self.ranks.applicable

    @property
    def mean_ranks(self) -> pd.Series:
        return self.ranks.mean_ranks

    @property
    def nemenyi_cliques(self) -> list[tuple[str, ...]]:
        """Nemenyi's groups (mean ranks closer than CD), whatever ``clique_method`` draws."""
        if not self.applicable:
            return []
        r = self.mean_ranks
        return [tuple(r.index[i] for i in c) for c in cd_cliques(r.to_numpy(), self.cd)]


@dataclass(frozen=True)
class RankRobustness:
    """Whether the ranking survives another choice of tasks (:func:`stats.rank_stability`).

    ``rank_probabilities``: models (in mean-rank order) × ranks 1..k, the probability of
    holding each rank under the bootstrap over tasks. ``pairs``: per model pair the
    mean-rank ``gap``, the Nemenyi verdict ``separated``, the fraction of bootstrap
    resamples (``bootstrap_agreement``) and of leave-one-task-out tables
    (``loo_agreement``) giving the same verdict, and ``tasks_needed`` for the gap to reach
    CD. ``loo``: mean ranks with each task left out (rows: the task dropped).
    """

    applicable: bool
    reason: str = ""
    n_resamples: int = 0
    seed: int = 0
    order_stability: float = float("nan")
    rank_probabilities: pd.DataFrame = field(default_factory=pd.DataFrame)
    pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    loo: pd.DataFrame = field(default_factory=pd.DataFrame)


@dataclass(frozen=True)
class ReportSettings:
    """What the analysis depends on besides the data (see ``BenchmarkReport``)."""

    metric: str | None
    alpha: float
    ci: str
    bootstrap_seed: int
    n_resamples: int
    pairwise_method: str
    equivalence_margin: float | None = None
    cliques: str = "nemenyi"
    missing: str = "drop-models"
    n_task_resamples: int = 2_000
    n_posterior_samples: int = 50_000

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]


@dataclass(frozen=True)
class DatasetSection:
    """The Datasets section: what the multi-label runs trained on.

    ``rows``: one :func:`graphnetz.analysis.dataset_statistics` row per (dataset name,
    loader config), its ``dataset`` the label shown. ``chance``: per row, ``dataset``,
    the run ``seeds`` averaged over, and ``metric``, ``split``, ``rule``, ``value`` of the
    chance level (mean over those seeds). ``notes``: datasets without facts, seeded
    loaders, malformed records.
    """

    rows: tuple[dict[str, Any], ...] = ()
    chance: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.rows and not self.notes


@dataclass(frozen=True)
class ReportAnalysis:
    """Every statistic of the report for one :class:`ReportSettings`, computed once.

    ``summary`` (per-cell CIs under ``settings.ci``), ``pairwise`` (Holm-adjusted tests,
    significance by ``settings.pairwise_method``), ``critical_difference`` (with the
    Friedman ranks), ``power`` (seed advisor at power 0.8 for the observed |Δμ|),
    ``cost``, ``datasets``; ``equivalence`` (TOST verdicts and Bayesian probabilities per
    pair within each task) and ``bayes_across`` (the Bayesian test on per-task means),
    both empty without ``settings.equivalence_margin``; ``robustness`` of the ranking;
    ``unpaired`` seed-pairs whose pairing fingerprints differ (left out of the paired
    tests); and what the writers name: analysed ``tasks`` and ``models`` in first-seen
    order, each task's metric ``directions``, ``n_values`` analysed values,
    ``excluded_tasks`` (without the chosen metric), the runs not analysed, the number of
    duplicate results dropped, and ``provenance``.
    """

    settings: ReportSettings
    tasks: tuple[str, ...]
    models: tuple[str, ...]
    directions: Mapping[str, str]
    n_values: int
    excluded_tasks: tuple[str, ...]
    summary: pd.DataFrame
    pairwise: pd.DataFrame
    critical_difference: CriticalDifference
    power: pd.DataFrame
    cost: pd.DataFrame
    datasets: DatasetSection
    skipped: tuple[Mapping[str, Any], ...]
    failed: tuple[Mapping[str, Any], ...]
    unreadable: tuple[Mapping[str, Any], ...]
    n_duplicates: int
    provenance: Mapping[str, Any]
    equivalence: pd.DataFrame = field(default_factory=pd.DataFrame)
    bayes_across: pd.DataFrame = field(default_factory=pd.DataFrame)
    robustness: RankRobustness = field(default_factory=lambda: RankRobustness(False))
    unpaired: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def ranks(self) -> RankAnalysis:
        return self.critical_difference.ranks
