"""Statistics across tasks: within-task ranks, the Friedman test and Nemenyi's CD.

Pure functions of the analysed long table; they return :class:`RankAnalysis` and
:class:`CriticalDifference`.
"""

from __future__ import annotations

import pandas as pd

from graphnetz import stats

from .analysis import CriticalDifference, RankAnalysis


def rank_analysis(selected: pd.DataFrame, alpha: float) -> RankAnalysis:
    """Rank table over tasks (models present on every task only) and the Friedman test.

    Models missing on some task are named in ``dropped_models`` (the caller warns);
    fewer than 2 tasks or 2 remaining models make it not applicable, with a reason.
    """
    tasks = list(dict.fromkeys(selected["task"]))
    models = list(dict.fromkeys(selected["model"]))
    present = selected.groupby("task")["model"].apply(set)
    common = [m for m in models if all(m in present[t] for t in tasks)]
    dropped = [m for m in models if m not in common]
    base = {"tasks": tasks, "models": common, "dropped_models": dropped, "alpha": alpha}
    if len(tasks) < 2 or len(common) < 2:
        reason = (
            f"needs at least 2 tasks and 2 models present on every task; "
            f"have {len(tasks)} task(s) and {len(common)} such model(s)"
        )
        return RankAnalysis(applicable=False, reason=reason, **base)
    means = selected.groupby(["task", "model"])["value"].mean().unstack("model")
    means = means.loc[tasks, common]
    first_direction = selected.groupby("task", sort=False)["direction"].first()
    higher = [first_direction[t] == "max" for t in tasks]
    ranks = pd.DataFrame(
        stats.rank_models(means.to_numpy(), higher), index=means.index, columns=common
    )
    result = stats.friedman_test(ranks.to_numpy())
    mean_ranks = pd.Series(result.mean_ranks, index=common, name="mean_rank").sort_values(
        kind="stable"
    )
    return RankAnalysis(True, "", rank_table=ranks, mean_ranks=mean_ranks, friedman=result, **base)


def critical_difference(ranks: RankAnalysis) -> CriticalDifference:
    """Nemenyi CD at the ranks' alpha, cliques of models closer than CD, pairwise p."""
    if not ranks.applicable:
        return CriticalDifference(ranks)
    k, n = len(ranks.models), len(ranks.tasks)
    r = ranks.mean_ranks
    cd = stats.nemenyi_cd(k, n, ranks.alpha)
    cliques = [tuple(r.index[i] for i in c) for c in stats.cd_cliques(r.to_numpy(), cd)]
    p = pd.DataFrame(stats.nemenyi_pvalues(r.to_numpy(), n), index=r.index, columns=r.index)
    return CriticalDifference(ranks, cd, stats.nemenyi_q(k, ranks.alpha), cliques, p)
