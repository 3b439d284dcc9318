"""Result objects of the across-task analysis (Friedman / Nemenyi)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from graphnetz.stats import FriedmanResult


@dataclass
class RankAnalysis:
    """Within-task ranks of the models present on every task, and the Friedman test.

    ``applicable`` is False (with ``reason``) when fewer than 2 tasks or 2 models remain.
    """

    applicable: bool
    reason: str
    tasks: list[str]
    models: list[str]
    dropped_models: list[str]
    alpha: float
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


@dataclass
class CriticalDifference:
    """Nemenyi critical difference, cliques (groups not separated by CD) and pairwise p."""

    ranks: RankAnalysis
    cd: float = float("nan")
    q_alpha: float = float("nan")
    cliques: list[tuple[str, ...]] = field(default_factory=list)
    nemenyi_p: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def applicable(self) -> bool:
        return self.ranks.applicable

    @property
    def mean_ranks(self) -> pd.Series:
        return self.ranks.mean_ranks
