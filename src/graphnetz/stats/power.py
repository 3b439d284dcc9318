"""Seed-count advisor: power of the two-sided paired t-test."""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from ._validate import check_alpha


class TooManySeeds(ValueError):
    """The target difference is too small for any practical number of seeds."""


def _check(diff_std: float, power: float, alpha: float) -> tuple[float, float, float]:
    if not np.isfinite(diff_std) or diff_std < 0:
        raise ValueError(f"diff_std must be a finite non-negative number; got {diff_std!r}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie in (0, 1); got {power!r}")
    return float(diff_std), float(power), check_alpha(alpha)


def paired_t_power(diff_std: float, delta: float, n_seeds: int, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with S seeds to detect a true mean difference δ.

    With ``λ = δ √S / σ_d`` and ``c = t_{1−α/2, S−1}``:
    ``power = 1 − F_{nct}(c; S−1, λ) + F_{nct}(−c; S−1, λ)``.
    """
    n = int(n_seeds)
    if n < 2:
        raise ValueError(f"n_seeds must be at least 2; got {n_seeds!r}")
    alpha = check_alpha(alpha)
    if diff_std == 0:
        return 1.0 if delta != 0 else alpha
    ncp = abs(delta) * np.sqrt(n) / diff_std
    c = stats.t.ppf(1.0 - alpha / 2.0, n - 1)
    upper = stats.nct.sf(c, n - 1, ncp)
    # The opposite tail is negligible here (< upper) but scipy can return NaN for it.
    lower = np.nan_to_num(stats.nct.cdf(-c, n - 1, ncp), nan=0.0)
    return float(min(1.0, upper + lower))


def seeds_needed(
    diff_std: float, delta: float, power: float = 0.8, alpha: float = 0.05, max_seeds: int = 100_000
) -> int:
    """Smallest S ≥ 2 for which the paired t-test reaches ``power`` against difference δ.

    ``diff_std`` is the standard deviation of per-seed differences (from a pilot run).
    Power grows with S, so S is bracketed by doubling and then bisected (noncentral t,
    :func:`paired_t_power`). Raises :class:`TooManySeeds` beyond ``max_seeds``.
    """
    diff_std, power, alpha = _check(diff_std, power, alpha)
    if not np.isfinite(delta) or delta == 0:
        raise ValueError(f"delta must be a finite non-zero difference; got {delta!r}")

    def enough(n: int) -> bool:
        return paired_t_power(diff_std, delta, n, alpha) >= power

    if enough(2):
        return 2
    lo, hi = 2, 4  # enough(lo) is False throughout
    while not enough(hi):
        if hi >= max_seeds:
            raise TooManySeeds(f"more than max_seeds={max_seeds} seeds would be needed")
        lo, hi = hi, min(2 * hi, max_seeds)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def min_detectable_difference(
    diff_std: float, n_seeds: int, power: float = 0.8, alpha: float = 0.05
) -> float:
    """Smallest true difference |δ| the paired t-test detects with ``power`` using S seeds."""
    diff_std, power, alpha = _check(diff_std, power, alpha)
    if int(n_seeds) < 2:
        raise ValueError(f"n_seeds must be at least 2; got {n_seeds!r}")
    if diff_std == 0:
        return 0.0

    def gap(effect: float) -> float:
        return paired_t_power(1.0, effect, int(n_seeds), alpha) - power

    if gap(0.0) >= 0:  # alpha >= power: the test rejects that often with no difference at all
        return 0.0
    hi = 1.0
    while gap(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(gap, 0.0, hi, xtol=1e-10)) * diff_std
