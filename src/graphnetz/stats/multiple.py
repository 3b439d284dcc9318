"""Multiple-comparison correction."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def holm_adjust(pvalues: ArrayLike) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values.

    With the m finite p-values sorted ascending, ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``
    (monotone, capped at 1), returned in the input order. NaN entries (untestable
    comparisons) stay NaN and do not count in m.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    ok = ~np.isnan(flat)
    if np.any((flat[ok] < 0) | (flat[ok] > 1)):
        raise ValueError(f"p-values must lie in [0, 1]; got {flat[ok].tolist()}")
    m = int(ok.sum())
    if m == 0:
        return out
    idx = np.flatnonzero(ok)
    order = idx[np.argsort(flat[idx], kind="stable")]
    factors = m - np.arange(m)
    adjusted = np.maximum.accumulate(np.minimum(1.0, factors * flat[order]))
    res = out.ravel()
    res[order] = adjusted
    return res.reshape(p.shape)
