"""Statistics across tasks: within-task ranks, the Friedman test, Nemenyi's CD, cliques
from Nemenyi or from Wilcoxon + Holm, and the robustness of the ranking.

Pure functions of the analysed long table; they return :class:`RankAnalysis`,
:class:`CriticalDifference` and :class:`RankRobustness`.
"""

from __future__ import annotations

import itertools

import pandas as pd

from graphnetz import stats

from .analysis import CriticalDifference, RankAnalysis, RankRobustness
from .settings import CLIQUE_METHODS, MISSING_RULES


def complete_blocks(
    tasks: list[str], models: list[str], present: pd.Series, missing: str
) -> tuple[list[str], list[str]]:
    """The (tasks, models) ranked under the ``missing`` rule: ``drop-models`` keeps every
    task and the models present on all of them; ``drop-tasks`` keeps every model and the
    tasks on which all of them are present."""
    if missing == "drop-models":
        return tasks, [m for m in models if all(m in present[t] for t in tasks)]
    if missing == "drop-tasks":
        return [t for t in tasks if all(m in present[t] for m in models)], models
    raise ValueError(f"missing={missing!r} is not valid; choose one of {list(MISSING_RULES)}")


def rank_analysis(selected: pd.DataFrame, alpha: float, missing: str = "drop-models"):
    """Rank table over complete blocks (see :func:`complete_blocks`) and the Friedman test.

    Models or tasks left out are named in ``dropped_models``/``dropped_tasks`` and every
    absent cell in ``missing_cells`` (the caller warns); fewer than 2 complete tasks or
    2 remaining models make it not applicable, with a reason.
    """
    all_tasks = list(dict.fromkeys(selected["task"]))
    all_models = list(dict.fromkeys(selected["model"]))
    present = selected.groupby("task")["model"].apply(set)
    tasks, models = complete_blocks(all_tasks, all_models, present, missing)
    base = {
        "tasks": tasks,
        "models": models,
        "dropped_models": [m for m in all_models if m not in models],
        "dropped_tasks": [t for t in all_tasks if t not in tasks],
        "missing_cells": [(t, m) for t in all_tasks for m in all_models if m not in present[t]],
        "missing": missing,
        "alpha": alpha,
    }
    if len(tasks) < 2 or len(models) < 2:
        reason = (
            f"needs at least 2 tasks and 2 models in complete blocks (every ranked model on "
            f"every ranked task); with missing={missing!r}, {len(tasks)} complete task(s) "
            f"and {len(models)} model(s) remain"
        )
        return RankAnalysis(applicable=False, reason=reason, **base)
    means = selected.groupby(["task", "model"])["value"].mean().unstack("model")
    means = means.loc[tasks, models]
    first_direction = selected.groupby("task", sort=False)["direction"].first()
    higher = [first_direction[t] == "max" for t in tasks]
    ranks = pd.DataFrame(
        stats.rank_models(means.to_numpy(), higher), index=means.index, columns=models
    )
    result = stats.friedman_test(ranks.to_numpy())
    mean_ranks = pd.Series(result.mean_ranks, index=models, name="mean_rank").sort_values(
        kind="stable"
    )
    return RankAnalysis(True, "", rank_table=ranks, mean_ranks=mean_ranks, friedman=result, **base)


def _task_means(selected: pd.DataFrame, ranks: RankAnalysis) -> tuple[pd.DataFrame, list[bool]]:
    means = selected.groupby(["task", "model"])["value"].mean().unstack("model")
    direction = selected.groupby("task", sort=False)["direction"].first()
    return means.loc[ranks.tasks, ranks.models], [direction[t] == "max" for t in ranks.tasks]


def critical_difference(
    ranks: RankAnalysis, selected: pd.DataFrame | None = None, cliques: str = "nemenyi"
) -> CriticalDifference:
    """Nemenyi CD at the ranks' alpha, pairwise Nemenyi p, and the cliques by ``cliques``:
    ``nemenyi`` (mean ranks closer than CD) or ``wilcoxon-holm`` (no Holm-adjusted
    Wilcoxon test on the per-task means of ``selected`` significant within the group)."""
    if cliques not in CLIQUE_METHODS:
        raise ValueError(f"cliques={cliques!r} is not valid; choose one of {list(CLIQUE_METHODS)}")
    if not ranks.applicable:
        return CriticalDifference(ranks, clique_method=cliques)
    k, n = len(ranks.models), len(ranks.tasks)
    r = ranks.mean_ranks
    cd = stats.nemenyi_cd(k, n, ranks.alpha)
    p = pd.DataFrame(stats.nemenyi_pvalues(r.to_numpy(), n), index=r.index, columns=r.index)
    wilcoxon = pd.DataFrame()
    if selected is not None:
        means, higher = _task_means(selected, ranks)
        _, holm = stats.wilcoxon_holm(means[list(r.index)].to_numpy(), higher)
        wilcoxon = pd.DataFrame(holm, index=r.index, columns=r.index)
    if cliques == "nemenyi":
        groups = stats.cd_cliques(r.to_numpy(), cd)
    else:
        if wilcoxon.empty:
            raise ValueError("cliques='wilcoxon-holm' needs the per-task values (selected)")
        groups = stats.cliques_from_significance(r.to_numpy(), wilcoxon.to_numpy() <= ranks.alpha)
    named = [tuple(r.index[i] for i in c) for c in groups]
    q = stats.nemenyi_q(k, ranks.alpha)
    return CriticalDifference(ranks, cd, q, named, p, cliques, wilcoxon)


def rank_robustness(ranks: RankAnalysis, n_resamples: int, seed: int) -> RankRobustness:
    """Bootstrap over tasks and leave-one-task-out of the rank table, and the number of
    tasks each pair's mean-rank gap would need to reach Nemenyi's CD."""
    if not ranks.applicable:
        return RankRobustness(False, ranks.reason)
    table = ranks.rank_table
    res = stats.rank_stability(table.to_numpy(), ranks.alpha, n_resamples, seed)
    models = list(table.columns)
    order = list(ranks.mean_ranks.index)
    k = len(models)
    probs = pd.DataFrame(res.rank_probabilities, index=models, columns=range(1, k + 1))
    pos = {m: i for i, m in enumerate(models)}
    pairs = []
    for a, b in itertools.combinations(order, 2):
        i, j = pos[a], pos[b]
        gap = abs(float(res.mean_ranks[i] - res.mean_ranks[j]))
        pairs.append(
            {
                "model_a": a,
                "model_b": b,
                "gap": gap,
                "separated": bool(res.separated[i, j]),
                "bootstrap_agreement": float(res.bootstrap_agreement[i, j]),
                "loo_agreement": float(res.loo_agreement[i, j]),
                "tasks_needed": stats.tasks_needed(gap, k, ranks.alpha),
            }
        )
    loo = pd.DataFrame(res.loo_mean_ranks, index=list(table.index), columns=models)[order]
    return RankRobustness(
        True,
        "",
        res.n_resamples,
        res.seed,
        res.order_stability,
        probs.loc[order],
        pd.DataFrame(pairs),
        loo,
    )
