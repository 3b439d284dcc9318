"""Input checks shared by the statistics functions."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .ties import TIE_DIGITS


def as_sample(values: ArrayLike, name: str = "values") -> np.ndarray:
    """Return ``values`` as a 1-d float array; refuse empty or non-finite input."""
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError(f"{name} is empty; need at least one value")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values: {arr.tolist()}")
    return arr


def as_pair(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Seed-aligned differences ``a - b``; the two samples must have equal length. A
    difference below float rounding of the two values (``TIE_DIGITS``) is zero."""
    x, y = as_sample(a, "a"), as_sample(b, "b")
    if x.shape != y.shape:
        raise ValueError(
            f"paired samples need equal length (one value per seed); got {x.size} and {y.size}"
        )
    d = x - y
    d[np.abs(d) <= 10.0**-TIE_DIGITS * np.maximum(np.abs(x), np.abs(y))] = 0.0
    return d


def check_alpha(alpha: float) -> float:
    """Significance level must lie strictly between 0 and 1."""
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha!r}")
    return float(alpha)
