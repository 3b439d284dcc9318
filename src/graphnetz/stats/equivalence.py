"""Equivalence of two models within a margin: paired TOST and the four-way verdict."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._validate import as_pair, check_alpha

#: The verdicts of :func:`equivalence_verdict`, in the order of its table.
VERDICTS = ("different", "equivalent", "different but trivial", "undetermined")


class EquivalenceTest(NamedTuple):
    """Paired TOST: the two one-sided t statistics, their p-values and ``pvalue`` = the
    larger one; ``note`` explains a degenerate case ("" otherwise)."""

    t_lower: float
    t_upper: float
    p_lower: float
    p_upper: float
    pvalue: float
    n: int
    margin: float
    note: str = ""


def check_margin(margin: float) -> float:
    """An equivalence margin must be a finite positive number (in the metric's units)."""
    try:
        value = float(margin)
    except (TypeError, ValueError):
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"equivalence margin must be a finite positive number in the metric's units; "
            f"got {margin!r}"
        )
    return value


def tost_paired(a: ArrayLike, b: ArrayLike, margin: float) -> EquivalenceTest:
    """Two one-sided paired t-tests of H₀: |δ| ≥ m against H₁: −m < δ < m (δ = E[a − b]).

    With ``se = σ̂_d / √S`` and S − 1 degrees of freedom:
    ``t_L = (d̄ + m) / se``, ``p_L = P(T ≥ t_L)`` (H₀: δ ≤ −m);
    ``t_U = (d̄ − m) / se``, ``p_U = P(T ≤ t_U)`` (H₀: δ ≥ m); ``p = max(p_L, p_U)``
    (as statsmodels' ``ttost_paired(a, b, −m, m)``).

    Degenerate cases: S < 2 ⇒ p = NaN; σ̂_d = 0 ⇒ p = 0 when |d̄| < m and p = 1 otherwise,
    with a note (the same limit as the difference test's T = ±∞).
    """
    m = check_margin(margin)
    d = as_pair(a, b)
    n = d.size
    nan = float("nan")
    if n < 2:
        return EquivalenceTest(nan, nan, nan, nan, nan, n, m, "needs at least 2 paired seeds")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        inside = abs(mean) < m
        p = 0.0 if inside else 1.0
        t_l = float(np.copysign(np.inf, mean + m)) if mean + m != 0 else 0.0
        t_u = float(np.copysign(np.inf, mean - m)) if mean - m != 0 else 0.0
        where = "inside" if inside else "not inside"
        note = f"differences are constant (zero variance) and {where} the margin"
        return EquivalenceTest(t_l, t_u, p, p, p, n, m, note)
    se = sd / np.sqrt(n)
    t_l, t_u = (mean + m) / se, (mean - m) / se
    p_l, p_u = float(stats.t.sf(t_l, n - 1)), float(stats.t.cdf(t_u, n - 1))
    return EquivalenceTest(float(t_l), float(t_u), p_l, p_u, max(p_l, p_u), n, m)


def equivalence_verdict(p_difference: float, p_equivalence: float, alpha: float = 0.05) -> str:
    """One of :data:`VERDICTS` from a (Holm-adjusted) difference p and TOST p.

    | difference test | TOST       | verdict                 |
    |-----------------|------------|-------------------------|
    | p ≤ α           | p > α      | different               |
    | p > α           | p ≤ α      | equivalent              |
    | p ≤ α           | p ≤ α      | different but trivial   |
    | p > α           | p > α      | undetermined            |

    A NaN p-value (untestable pair) gives ``undetermined``.
    """
    alpha = check_alpha(alpha)
    if math.isnan(p_difference) or math.isnan(p_equivalence):
        return "undetermined"
    differs, equivalent = p_difference <= alpha, p_equivalence <= alpha
    if differs:
        return "different but trivial" if equivalent else "different"
    return "equivalent" if equivalent else "undetermined"
