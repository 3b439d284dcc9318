"""Bayesian signed-rank test with a region of practical equivalence (Benavoli et al., 2017)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validate import as_pair

#: Weight of the Dirichlet process' pseudo-observation at zero (baycomp's ``prior``).
PRIOR_WEIGHT = 0.5
#: Posterior samples drawn per comparison unless told otherwise.
N_POSTERIOR_SAMPLES = 50_000
_CHUNK = 10_000  # posterior samples evaluated at once (bounds the memory used)


class BayesianComparison(NamedTuple):
    """Posterior probabilities that A is better by more than the ROPE, that the two are
    practically equivalent (inside the ROPE), and that B is better; they sum to 1."""

    p_a_better: float
    p_rope: float
    p_b_better: float
    n: int
    rope: float
    n_samples: int
    seed: int


def _heaviside(x: np.ndarray) -> np.ndarray:
    return (x > 0).astype(float) + 0.5 * (x == 0)


def signed_rank_posterior(d: np.ndarray, rope: float, weights: np.ndarray) -> np.ndarray:
    """Posterior samples ``(θ_B, θ_rope, θ_A)`` of the Dirichlet-process signed-rank model.

    The sample points are ``z = (0, d_1, …, d_n)`` (the pseudo-observation at 0 first) and
    each row ``w`` of ``weights`` is one Dirichlet draw over them. With Walsh averages
    ``(z_i + z_j)/2``: ``θ_A = Σ_ij w_i w_j H(z_i + z_j − 2r)``,
    ``θ_B = Σ_ij w_i w_j H(−z_i − z_j − 2r)``, ``θ_rope = 1 − θ_A − θ_B``, where
    ``H(x) = 1[x > 0] + ½·1[x = 0]``. Returns an array of shape (len(weights), 3).
    """
    z = np.concatenate([[0.0], d])
    sums = z[:, None] + z[None, :]
    above, below = _heaviside(sums - 2 * rope), _heaviside(-sums - 2 * rope)
    out = np.empty((weights.shape[0], 3))
    for start in range(0, weights.shape[0], _CHUNK):
        w = weights[start : start + _CHUNK]
        out[start : start + len(w), 2] = np.einsum("si,ij,sj->s", w, above, w)
        out[start : start + len(w), 0] = np.einsum("si,ij,sj->s", w, below, w)
    out[:, 1] = 1.0 - out[:, 0] - out[:, 2]
    return out


def bayesian_signed_rank(
    a: ArrayLike,
    b: ArrayLike,
    rope: float,
    *,
    higher_is_better: bool = True,
    n_samples: int = N_POSTERIOR_SAMPLES,
    seed: int = 0,
    prior_weight: float = PRIOR_WEIGHT,
) -> BayesianComparison:
    """P(A better), P(practically equivalent), P(B better) from paired values ``a``, ``b``.

    The differences ``d = a − b`` (``b − a`` when lower is better, so that d > 0 always
    favours A) get a Dirichlet-process posterior ``Dir(s, 1, …, 1)`` over
    ``(0, d_1, …, d_n)`` with prior weight ``s`` on the pseudo-observation 0; each of
    ``n_samples`` draws gives ``(θ_B, θ_rope, θ_A)`` (:func:`signed_rank_posterior`), and
    each reported probability is the fraction of draws in which that region is the most
    probable (as baycomp's ``SignedRankTest``). ``rope`` is the half-width r of the region
    of practical equivalence ``[−r, r]``, in the metric's units. Draws come from
    ``numpy.random.default_rng(seed)``: the same inputs and seed give the same numbers.
    """
    d = as_pair(a, b)
    if not higher_is_better:
        d = -d
    r = float(rope)
    if not math.isfinite(r) or r < 0:
        raise ValueError(f"rope must be a finite non-negative number; got {rope!r}")
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    if not prior_weight > 0:
        raise ValueError(f"prior_weight must be positive; got {prior_weight!r}")
    weights = np.ones(d.size + 1)
    weights[0] = prior_weight
    draws = np.random.default_rng(seed).dirichlet(weights, int(n_samples))
    winners = np.argmax(signed_rank_posterior(d, r, draws), axis=1)
    p_b, p_rope, p_a = np.bincount(winners, minlength=3) / len(winners)
    return BayesianComparison(
        float(p_a), float(p_rope), float(p_b), d.size, r, int(n_samples), int(seed)
    )
