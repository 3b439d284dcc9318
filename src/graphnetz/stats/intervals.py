"""Confidence intervals for the mean of per-seed results."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._validate import as_sample, check_alpha


class TInterval(NamedTuple):
    """Mean with its Student-t interval; std/half_width/low/high are NaN when n = 1."""

    mean: float
    std: float
    n: int
    half_width: float
    low: float
    high: float


class BootstrapInterval(NamedTuple):
    """Mean with its percentile-bootstrap interval and symmetric half-width."""

    mean: float
    n: int
    half_width: float
    low: float
    high: float
    n_resamples: int
    seed: int


def t_interval(values: ArrayLike, alpha: float = 0.05) -> TInterval:
    """Student-t interval ``mean ± h`` with ``h = t_{1-α/2, S-1} · σ̂ / √S`` (σ̂ with ddof 1).

    With a single value the spread is unknown, so std, h, low and high are NaN
    (undefined), never 0.
    """
    x = as_sample(values)
    alpha = check_alpha(alpha)
    n = x.size
    mean = float(x.mean())
    if n < 2:
        nan = float("nan")
        return TInterval(mean, nan, n, nan, nan, nan)
    std = float(x.std(ddof=1))
    h = float(stats.t.ppf(1.0 - alpha / 2.0, n - 1) * std / np.sqrt(n))
    return TInterval(mean, std, n, h, mean - h, mean + h)


def bootstrap_interval(
    values: ArrayLike, alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0
) -> BootstrapInterval:
    """Percentile bootstrap of the mean: ``[q_{α/2}, q_{1-α/2}]`` of ``n_resamples`` resampled
    means (resampling the S values with replacement), ``h = (q_hi − q_lo) / 2``.

    Reproducible: the resampling uses ``numpy.random.default_rng(seed)``. With a single
    value the interval is undefined (NaN) — a resample of one value has no spread to show.
    """
    x = as_sample(values)
    alpha = check_alpha(alpha)
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    n = x.size
    mean = float(x.mean())
    if n < 2:
        nan = float("nan")
        return BootstrapInterval(mean, n, nan, nan, nan, int(n_resamples), int(seed))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(int(n_resamples), n))
    means = x[idx].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return BootstrapInterval(
        mean, n, float(high - low) / 2.0, float(low), float(high), int(n_resamples), int(seed)
    )
