"""Equivalence within a margin and the Bayesian comparison: TOST verdicts and posterior
probabilities per pair within each task, and the Bayesian test across tasks.

Pure functions of the analysed long table; computed only when a margin is given (there
is no margin that suits every metric).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from graphnetz import stats

from .within_task import Pairing, aligned_pairs

EQUIVALENCE_COLUMNS = [
    "task",
    "model_a",
    "model_b",
    "n_common",
    "mean_diff",
    "margin",
    "tost_p",
    "tost_p_holm",
    "diff_p_holm",
    "verdict",
    "p_a_better",
    "p_rope",
    "p_b_better",
    "note",
]
ACROSS_COLUMNS = ["model_a", "model_b", "n_tasks", "margin", "p_a_better", "p_rope", "p_b_better"]


def equivalence_frame(
    selected: pd.DataFrame,
    pairwise: pd.DataFrame,
    margin: float,
    alpha: float,
    *,
    n_samples: int,
    seed: int,
    pairing: Pairing | None = None,
) -> pd.DataFrame:
    """Per pair within each task: paired TOST within ``margin`` (Holm-adjusted across the
    pairs of the task), the verdict against the active difference test's Holm p
    (``pairwise``), and the Bayesian signed-rank probabilities with ROPE = margin.

    "A better" follows the task's direction (higher accuracy, lower MAE).
    """
    margin = stats.check_margin(margin)
    directions = selected.groupby("task", sort=False)["direction"].first()
    active = pairwise["t_p_holm"].where(pairwise["method"] == "t", pairwise["w_p_holm"])
    diff_p = {
        (r.task, r.model_a, r.model_b): p
        for r, p in zip(pairwise.itertuples(), active, strict=True)
    }
    rows = []
    for pair in aligned_pairs(selected, pairing):
        xa, xb = pair.values[pair.a].to_numpy(), pair.values[pair.b].to_numpy()
        row = {
            "task": pair.task,
            "model_a": pair.a,
            "model_b": pair.b,
            "n_common": len(xa),
            "mean_diff": float(np.mean(xa - xb)) if len(xa) else np.nan,
            "margin": margin,
            "tost_p": np.nan,
            "p_a_better": np.nan,
            "p_rope": np.nan,
            "p_b_better": np.nan,
            "note": "",
        }
        if len(xa) >= 2:
            tost = stats.tost_paired(xa, xb, margin)
            bayes = stats.bayesian_signed_rank(
                xa,
                xb,
                margin,
                higher_is_better=directions[pair.task] == "max",
                n_samples=n_samples,
                seed=seed,
            )
            row.update(
                tost_p=tost.pvalue,
                p_a_better=bayes.p_a_better,
                p_rope=bayes.p_rope,
                p_b_better=bayes.p_b_better,
                note=tost.note,
            )
        else:
            row["note"] = "untestable: fewer than 2 paired seeds"
        row["diff_p_holm"] = diff_p.get((pair.task, pair.a, pair.b), np.nan)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[c for c in EQUIVALENCE_COLUMNS if c != "verdict"])
    if frame.empty:
        return pd.DataFrame(columns=EQUIVALENCE_COLUMNS)
    frame["tost_p_holm"] = frame.groupby("task", sort=False)["tost_p"].transform(
        lambda p: stats.holm_adjust(p.to_numpy())
    )
    frame["verdict"] = [
        stats.equivalence_verdict(d, e, alpha)
        for d, e in zip(frame["diff_p_holm"], frame["tost_p_holm"], strict=True)
    ]
    return frame[EQUIVALENCE_COLUMNS]


def bayes_across_frame(
    selected: pd.DataFrame, margin: float, *, n_samples: int, seed: int
) -> pd.DataFrame:
    """The Bayesian signed-rank test on per-task mean differences, per model pair, over the
    tasks both models ran (each difference signed so that > 0 favours A); ROPE = margin,
    in the metric's units, so it assumes the tasks' metrics share a scale."""
    margin = stats.check_margin(margin)
    means = selected.groupby(["task", "model"], sort=False)["value"].mean().unstack("model")
    sign = selected.groupby("task", sort=False)["direction"].first().map({"max": 1.0, "min": -1.0})
    signed = means.mul(sign.reindex(means.index), axis=0)
    rows = []
    models = list(dict.fromkeys(selected["model"]))
    for a, b in itertools.combinations(models, 2):
        both = signed[[a, b]].dropna()
        if len(both) < 2:
            continue
        res = stats.bayesian_signed_rank(
            both[a].to_numpy(), both[b].to_numpy(), margin, n_samples=n_samples, seed=seed
        )
        rows.append(
            {
                "model_a": a,
                "model_b": b,
                "n_tasks": len(both),
                "margin": margin,
                "p_a_better": res.p_a_better,
                "p_rope": res.p_rope,
                "p_b_better": res.p_b_better,
            }
        )
    return pd.DataFrame(rows, columns=ACROSS_COLUMNS)
