"""Markdown of the newer report sections: equivalence and Bayesian comparison, robustness
of the ranking, missing cells and the paired-design check."""

from __future__ import annotations

import math

import pandas as pd

from .analysis import RankAnalysis, ReportAnalysis
from .cells import FigureLinks, md_image, md_table, num, pval, task_slugs


def prob(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3f}"


def count(value: float) -> str:
    return "∞ (no gap)" if math.isinf(value) else str(int(value))


def missing_lines(ranks: RankAnalysis) -> list[str]:
    """Which cells were absent and what the rank table did about them."""
    if not ranks.missing_cells:
        return []
    cells = ", ".join(f"{m} on {t}" for t, m in ranks.missing_cells)
    rule = (
        "models absent from some task are left out (`--missing drop-models`)"
        if ranks.missing == "drop-models"
        else "tasks lacking some model are left out (`--missing drop-tasks`)"
    )
    L = [f"Missing cells (no result): {cells}. Ranks use complete blocks only: {rule}."]
    if ranks.dropped_tasks:  # dropped models are named by the section itself
        L.append(f"Tasks left out of the ranking: {', '.join(ranks.dropped_tasks)}.")
    return [" ".join(L), ""]


def pairing_lines(a: ReportAnalysis) -> list[str]:
    """Seed-pairs whose runs do not share what a paired comparison assumes."""
    if a.unpaired.empty:
        return []
    L = [
        "## Paired-design check",
        "",
        "These seed-pairs are **not paired**: the two runs of the seed differ in their "
        "pairing fingerprint (dataset content, split ids, evaluation negatives), so their "
        "difference mixes the models with the data. They are left out of every paired test.",
        "",
    ]
    rows = [
        [r["task"], r["model_a"], r["model_b"], r["seed"], r["differs"]]
        for r in a.unpaired.to_dict("records")
    ]
    return L + md_table(["task", "A", "B", "seed", "differs in"], rows)


def equivalence_lines(a: ReportAnalysis, figures: FigureLinks | str | None) -> list[str]:
    """TOST verdicts and Bayesian probabilities per pair within each task, and across."""
    margin = a.settings.equivalence_margin
    if margin is None:
        return []
    method = "paired t-test" if a.settings.pairwise_method == "t" else "Wilcoxon test"
    slugs = task_slugs(a.tasks)
    L = [
        "## Equivalence and Bayesian comparison",
        "",
        f"Margin m = {margin:g} (in the metric's units). *p_TOST*: two one-sided paired "
        f"t-tests of |δ| ≥ m, Holm-adjusted across the pairs of the task; *p_diff*: the "
        f"{method} of the pairwise section (Holm). Verdict: *different* (only the "
        "difference is significant), *equivalent* (only TOST), *different but trivial* "
        "(both: a real difference inside the margin), *undetermined* (neither). "
        "P(A), P(ROPE), P(B): Bayesian signed-rank test (Benavoli et al., 2017) with the "
        f"region of practical equivalence [−m, m], {a.settings.n_posterior_samples} "
        f"posterior draws, seed {a.settings.bootstrap_seed}; *A better* follows the "
        "metric's direction.",
        "",
    ]
    eq = a.equivalence
    header = ["A", "B", "n", "Δμ (A−B)", "p_TOST (Holm)", "p_diff (Holm)", "verdict"]
    header += ["P(A better)", "P(ROPE)", "P(B better)"]
    for task in dict.fromkeys(eq["task"]):
        rows = [
            [
                r["model_a"],
                r["model_b"],
                r["n_common"],
                num(r["mean_diff"]),
                pval(r["tost_p_holm"]),
                pval(r["diff_p_holm"]),
                f"**{r['verdict']}**",
                prob(r["p_a_better"]),
                prob(r["p_rope"]),
                prob(r["p_b_better"]),
            ]
            for r in eq[eq["task"] == task].to_dict("records")
        ]
        L += [f"### {task}", ""] + md_table(header, rows)
        L += md_image(figures, f"bayes_{slugs[task]}", f"{task} posterior")
    across = a.bayes_across
    if not across.empty:
        L += [
            "### Across tasks",
            "",
            "The same Bayesian test on per-task mean differences (each signed so that > 0 "
            "favours A), over the tasks both models ran; the ROPE is the same margin, which "
            "assumes the tasks' metrics share a scale.",
            "",
        ]
        rows = [
            [
                r["model_a"],
                r["model_b"],
                r["n_tasks"],
                prob(r["p_a_better"]),
                prob(r["p_rope"]),
                prob(r["p_b_better"]),
            ]
            for r in across.to_dict("records")
        ]
        L += md_table(["A", "B", "tasks", "P(A better)", "P(ROPE)", "P(B better)"], rows)
        L += md_image(figures, "bayes_across_tasks", "posterior across tasks")
    return L


def robustness_lines(a: ReportAnalysis) -> list[str]:
    """Bootstrap over tasks, leave-one-task-out and tasks needed (after the CD diagram)."""
    rob = a.robustness
    if not rob.applicable:
        return []
    probs = rob.rank_probabilities
    n_tasks = len(rob.loo)
    if pd.isna(rob.order_stability):
        stability = "The observed mean ranks tie, so there is no single order to reproduce."
    else:
        stability = (
            f"The observed order is reproduced exactly in {prob(rob.order_stability)} of "
            "the resamples."
        )
    L = [
        "## Robustness of the ranking",
        "",
        f"Would the ranking survive another choice of tasks? Bootstrap: B = {rob.n_resamples} "
        f"resamples of the {n_tasks} tasks with replacement (seed {rob.seed}); leave-one-out: "
        "each task dropped in turn. P(rank r): probability that the model holds rank r by "
        f"mean rank (ties share). {stability}",
        "",
    ]
    L += md_table(
        ["model", *[f"P(rank {c})" for c in probs.columns]],
        [[m, *[prob(v) for v in row]] for m, row in probs.iterrows()],
    )
    L += [
        "Per pair: the mean-rank gap, the Nemenyi verdict (separated: gap ≥ CD), the share of "
        "bootstrap resamples and of leave-one-out tables (CD at N − 1) that reach the same "
        "verdict, and the number of tasks N at which Nemenyi's CD would shrink to the "
        "observed gap (if the gap stayed as it is).",
        "",
    ]
    rows = [
        [
            r["model_a"],
            r["model_b"],
            f"{r['gap']:.2f}",
            "separated" if r["separated"] else "not separated",
            prob(r["bootstrap_agreement"]),
            prob(r["loo_agreement"]),
            count(r["tasks_needed"]),
        ]
        for r in rob.pairs.to_dict("records")
    ]
    L += md_table(
        ["A", "B", "gap", "Nemenyi", "bootstrap agrees", "leave-one-out agrees", "tasks needed"],
        rows,
    )
    L += ["Mean ranks with one task left out:", ""]
    L += md_table(
        ["task left out", *rob.loo.columns],
        [[t, *[f"{v:.2f}" for v in row]] for t, row in rob.loo.iterrows()],
    )
    return L
