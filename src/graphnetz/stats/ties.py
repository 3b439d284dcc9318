"""Numbers equal but for float rounding, made equal before ties are taken."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: Significant digits two numbers share to count as equal: float rounding (a mean summed
#: in another order, 0.8 + 0.9 against 2 x 0.85) stays far below, any real difference of
#: benchmark scores far above.
TIE_DIGITS = 12


def settled(values: ArrayLike, digits: int = TIE_DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits, so that numbers equal but for
    float rounding become equal (and tie where ranks are taken). NaN and ±inf stay."""
    arr = np.array(values, dtype=float)
    flat = arr.reshape(-1)
    for i, value in enumerate(flat):  # a decimal rounding, exact at every magnitude
        if np.isfinite(value):
            flat[i] = float(f"{value:.{digits}g}")
    return arr
