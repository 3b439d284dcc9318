"""Paired comparisons of two models on seed-aligned results.

Inputs ``a`` and ``b`` hold one value per seed, aligned so that ``a[s]`` and ``b[s]``
come from the same seed; every test works on the differences ``d_s = a_s − b_s``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._validate import as_pair
from .intervals import TInterval, t_interval
from .ties import settled

#: Largest number of non-zero differences for which the exact Wilcoxon null is used.
WILCOXON_EXACT_MAX_N = 50


class PairedTest(NamedTuple):
    """Result of a paired test; ``note`` explains a degenerate case ("" otherwise)."""

    statistic: float
    pvalue: float
    n: int
    method: str
    note: str = ""


def paired_t_test(a: ArrayLike, b: ArrayLike) -> PairedTest:
    """Two-sided paired t-test: ``T = d̄ / (σ̂_d / √S)`` with S − 1 degrees of freedom.

    Degenerate cases: S < 2 ⇒ p = NaN; all differences zero ⇒ p = 1 (no evidence of any
    difference); constant non-zero differences (σ̂_d = 0, d̄ ≠ 0) ⇒ T = ±∞ and p = 0, with
    a note: every seed moved by the same amount, which the t-test's limit σ̂_d → 0 calls
    certain (the Wilcoxon test, bounded by its seed count, stays the sober reading).
    """
    d = as_pair(a, b)
    n = d.size
    nan = float("nan")
    if n < 2:
        return PairedTest(nan, nan, n, "paired t", "needs at least 2 paired seeds")
    if np.all(d == 0):
        return PairedTest(0.0, 1.0, n, "paired t", "all differences are zero")
    sd = d.std(ddof=1)
    if sd == 0:
        t_inf = float(np.copysign(np.inf, d.mean()))
        note = "differences are constant and non-zero (zero variance): T = ±∞, p = 0"
        return PairedTest(t_inf, 0.0, n, "paired t", note)
    t = float(d.mean() / (sd / np.sqrt(n)))
    p = float(2.0 * stats.t.sf(abs(t), n - 1))
    return PairedTest(t, p, n, "paired t")


def _signed_rank_null(doubled_ranks: np.ndarray) -> np.ndarray:
    """Exact null distribution of 2·W⁺ by dynamic programming over rank sums.

    Under H0 each rank carries a + sign with probability ½ independently, so the
    distribution is built one rank at a time: P_k(w) = ½ P_{k−1}(w) + ½ P_{k−1}(w − r_k).
    Ranks are doubled so that mid-ranks of ties stay integer.
    """
    total = int(doubled_ranks.sum())
    prob = np.zeros(total + 1)
    prob[0] = 1.0
    for r in doubled_ranks.astype(int):
        shifted = np.zeros_like(prob)
        shifted[r:] = prob[: total + 1 - r]
        prob = 0.5 * prob + 0.5 * shifted
    return prob


def wilcoxon_test(a: ArrayLike, b: ArrayLike) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test on the differences.

    Zero differences are dropped (Wilcoxon's zero rule, scipy's ``zero_method="wilcox"``);
    the remaining n′ absolute differences get average ranks. The statistic is
    ``T = min(W⁺, W⁻)``. For n′ ≤ 50 the p-value comes from the exact null distribution
    (conditional on the tie pattern when |d| has ties), ``p = min(1, 2·min(P(W⁺ ≤ w), P(W⁺ ≥ w)))``;
    above that the normal approximation with tie-corrected variance is used.
    All differences zero ⇒ p = 1 with a note.
    """
    d = as_pair(a, b)
    n_total = d.size
    nz = d[d != 0]
    n = nz.size
    if n == 0:
        return PairedTest(0.0, 1.0, n_total, "wilcoxon", "all differences are zero")
    ranks = stats.rankdata(settled(np.abs(nz)))  # |d| equal but for rounding: tied
    w_plus = float(ranks[nz > 0].sum())
    w_minus = float(ranks[nz < 0].sum())
    statistic = min(w_plus, w_minus)
    notes = []
    if n < n_total:
        notes.append(f"{n_total - n} zero difference(s) dropped")
    has_ties = np.unique(ranks).size < n
    if n <= WILCOXON_EXACT_MAX_N:
        prob = _signed_rank_null(np.rint(2 * ranks))
        w2 = int(round(2 * w_plus))
        cdf = prob[: w2 + 1].sum()
        sf = prob[w2:].sum()
        p = float(min(1.0, 2.0 * min(cdf, sf)))
        method = "wilcoxon exact"
        if has_ties:
            notes.append("exact null conditional on tied ranks")
    else:
        _, counts = np.unique(ranks, return_counts=True)
        var = n * (n + 1) * (2 * n + 1) / 24.0 - (counts**3 - counts).sum() / 48.0
        z = (w_plus - n * (n + 1) / 4.0) / np.sqrt(var)
        p = float(2.0 * stats.norm.sf(abs(z)))
        method = "wilcoxon normal approximation"
    return PairedTest(statistic, p, n_total, method, "; ".join(notes))


def cohens_dz(a: ArrayLike, b: ArrayLike) -> float:
    """Effect size of paired data: ``d_z = d̄ / σ̂_d`` (ddof 1); NaN when S < 2 or σ̂_d = 0."""
    d = as_pair(a, b)
    if d.size < 2:
        return float("nan")
    sd = d.std(ddof=1)
    return float(d.mean() / sd) if sd > 0 else float("nan")


def mean_difference(a: ArrayLike, b: ArrayLike, alpha: float = 0.05) -> TInterval:
    """Mean paired difference ``d̄`` with its Student-t interval (see :func:`t_interval`)."""
    return t_interval(as_pair(a, b), alpha=alpha)
