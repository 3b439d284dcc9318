"""Statistics of the benchmark report: pure functions, arrays in, named results out.

Every function implements one formula of the statistical report (intervals, paired tests,
Holm, Friedman, Nemenyi, the seed advisor, equivalence, the Bayesian signed-rank test,
rank stability, cliques from Wilcoxon + Holm); ``docs/statistics.md`` lists them.
"""

from .bayesian import BayesianComparison, bayesian_signed_rank, signed_rank_posterior
from .cliques import cliques_from_significance, wilcoxon_holm
from .equivalence import VERDICTS, EquivalenceTest, check_margin, equivalence_verdict, tost_paired
from .intervals import BootstrapInterval, TInterval, bootstrap_interval, t_interval
from .multiple import holm_adjust
from .paired import PairedTest, cohens_dz, mean_difference, paired_t_test, wilcoxon_test
from .power import TooManySeeds, min_detectable_difference, paired_t_power, seeds_needed
from .rank_stability import RankStability, rank_position_probabilities, rank_stability, tasks_needed
from .ranking import (
    FriedmanResult,
    cd_cliques,
    friedman_test,
    nemenyi_cd,
    nemenyi_pvalues,
    nemenyi_q,
    rank_models,
)
from .ties import settled

__all__ = [
    "settled",
    "VERDICTS",
    "BayesianComparison",
    "BootstrapInterval",
    "EquivalenceTest",
    "RankStability",
    "bayesian_signed_rank",
    "check_margin",
    "cliques_from_significance",
    "equivalence_verdict",
    "rank_position_probabilities",
    "rank_stability",
    "signed_rank_posterior",
    "tasks_needed",
    "tost_paired",
    "wilcoxon_holm",
    "FriedmanResult",
    "PairedTest",
    "TInterval",
    "bootstrap_interval",
    "cd_cliques",
    "cohens_dz",
    "friedman_test",
    "holm_adjust",
    "mean_difference",
    "min_detectable_difference",
    "nemenyi_cd",
    "nemenyi_pvalues",
    "nemenyi_q",
    "paired_t_power",
    "paired_t_test",
    "rank_models",
    "seeds_needed",
    "TooManySeeds",
    "t_interval",
    "wilcoxon_test",
]
