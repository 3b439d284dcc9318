"""How much a ranking over tasks depends on which tasks were run.

Inputs are the N × k within-task ranks (:func:`rank_models`); a model's ranks on a task do
not depend on the other tasks, so resampling tasks resamples rows of that table.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._validate import check_alpha
from .ranking import _as_matrix, nemenyi_cd, nemenyi_q

#: Bootstrap resamples of the tasks unless told otherwise.
N_TASK_RESAMPLES = 2_000


class RankStability(NamedTuple):
    """Bootstrap over tasks and leave-one-task-out of an N × k rank table.

    ``rank_probabilities[i, r]``: probability that model i holds rank r + 1 (1 = best)
    among the k models' mean ranks over the resamples (ties share the ranks they span
    equally). ``order_stability``: fraction of resamples with the observed order, strictly (NaN
    when the observed mean ranks tie).
    ``separated[i, j]``: the observed Nemenyi verdict (|r̄_i − r̄_j| ≥ CD);
    ``bootstrap_agreement[i, j]``: fraction of resamples giving the same verdict (same N,
    same CD); ``loo_mean_ranks[t]``: mean ranks without task t; ``loo_agreement[i, j]``:
    fraction of the N leave-one-out tables giving the same verdict (CD at N − 1);
    NaN when N < 3 (one remaining task says nothing).
    """

    mean_ranks: np.ndarray
    rank_probabilities: np.ndarray
    order_stability: float
    cd: float
    separated: np.ndarray
    bootstrap_agreement: np.ndarray
    loo_mean_ranks: np.ndarray
    loo_agreement: np.ndarray
    n_resamples: int
    seed: int


def rank_position_probabilities(mean_ranks: np.ndarray) -> np.ndarray:
    """For B × k rows of mean ranks, the B × k × k shares of each model in each position:
    a model tied with others over positions lo+1..hi gets 1/(hi − lo) of each."""
    less = (mean_ranks[:, None, :] < mean_ranks[:, :, None]).sum(axis=2)  # B × k
    ties = (mean_ranks[:, None, :] == mean_ranks[:, :, None]).sum(axis=2)
    positions = np.arange(mean_ranks.shape[1])
    inside = (positions >= less[..., None]) & (positions < (less + ties)[..., None])
    return inside / ties[..., None]


def rank_stability(
    ranks: ArrayLike, alpha: float = 0.05, n_resamples: int = N_TASK_RESAMPLES, seed: int = 0
) -> RankStability:
    """Rank probabilities and verdict survival by bootstrap over tasks (``n_resamples``
    resamples of the N rows with replacement, from ``numpy.random.default_rng(seed)``)
    and by leaving each task out in turn; see :class:`RankStability`."""
    r = _as_matrix(ranks)
    alpha = check_alpha(alpha)
    n, k = r.shape
    if n < 2 or k < 2:
        raise ValueError(f"rank stability needs at least 2 tasks and 2 models; got N={n}, k={k}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be a positive integer; got {n_resamples!r}")
    observed = r.mean(axis=0)
    cd = nemenyi_cd(k, n, alpha)

    def verdicts(means: np.ndarray, cd_value: float) -> np.ndarray:
        return np.abs(means[..., :, None] - means[..., None, :]) >= cd_value

    separated = verdicts(observed, cd)
    idx = np.random.default_rng(seed).integers(0, n, size=(int(n_resamples), n))
    boot = r[idx].mean(axis=1)
    probabilities = rank_position_probabilities(boot).mean(axis=0)
    # the observed order, strictly (a resample with a tie does not reproduce it)
    same_order = np.all(np.diff(boot[:, np.argsort(observed)], axis=1) > 0, axis=1)
    # a tie in the observed ranks has no single order to reproduce
    order_stability = float(same_order.mean()) if np.unique(observed).size == k else math.nan
    agreement = (verdicts(boot, cd) == separated).mean(axis=0)
    loo = np.array([np.delete(r, t, axis=0).mean(axis=0) for t in range(n)])
    if n >= 3:
        loo_agree = (verdicts(loo, nemenyi_cd(k, n - 1, alpha)) == separated).mean(axis=0)
    else:
        loo_agree = np.full((k, k), np.nan)
    return RankStability(
        observed,
        probabilities,
        order_stability,
        cd,
        separated,
        agreement,
        loo,
        loo_agree,
        int(n_resamples),
        int(seed),
    )


def tasks_needed(gap: float, k: int, alpha: float = 0.05) -> float:
    """Smallest number of tasks N at which Nemenyi calls a mean-rank gap significant,
    assuming the gap stays as observed: ``CD(N) = q_α √(k(k+1)/(6N)) ≤ gap`` ⇔
    ``N ≥ q_α² k(k+1) / (6 gap²)``. ``inf`` for a zero gap."""
    g = abs(float(gap))
    if not math.isfinite(g):
        raise ValueError(f"gap must be a finite number; got {gap!r}")
    if g == 0:
        return math.inf
    q = nemenyi_q(k, alpha)
    n = max(1, math.ceil(q * q * k * (k + 1) / (6.0 * g * g) - 1e-9))
    while nemenyi_cd(k, n, alpha) > g:  # guard the ceiling against rounding
        n += 1
    while n > 1 and nemenyi_cd(k, n - 1, alpha) <= g:
        n -= 1
    return float(n)
