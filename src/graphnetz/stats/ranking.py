"""Ranking models across tasks: Friedman omnibus test and Nemenyi post-hoc (Demšar, 2006)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ._validate import check_alpha
from .ties import settled


class FriedmanResult(NamedTuple):
    """Friedman χ² and the Iman–Davenport F computed from an N × k rank table."""

    statistic: float
    pvalue: float
    dof: int
    iman_davenport: float
    iman_davenport_pvalue: float
    iman_davenport_dof: tuple[int, int]
    n_tasks: int
    k: int
    mean_ranks: np.ndarray


def _as_matrix(matrix: ArrayLike) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"expected an N tasks × k models matrix; got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(
            "the score matrix has missing (NaN) or infinite entries; "
            "rank only models present on every task"
        )
    return m


def rank_models(matrix: ArrayLike, higher_is_better: bool | Sequence[bool] = True) -> np.ndarray:
    """Rank the k models within each of the N tasks (rows); rank 1 is the best.

    ``higher_is_better`` is one flag for all tasks or one per task (accuracy: True,
    MAE: False). Ties receive the average of the ranks they span; scores equal but for
    float rounding (means summed in another order) tie.
    """
    m = settled(_as_matrix(matrix))
    flags = np.broadcast_to(np.asarray(higher_is_better, dtype=bool), (m.shape[0],))
    signed = np.where(flags[:, None], -m, m)
    return stats.rankdata(signed, axis=1)


def friedman_test(
    matrix: ArrayLike, higher_is_better: bool | Sequence[bool] | None = None
) -> FriedmanResult:
    """Friedman test on an N × k table.

    ``higher_is_better=None`` means ``matrix`` already holds within-task ranks (from
    :func:`rank_models`); otherwise raw scores are ranked with that direction first.

    ``χ²_F = 12N/(k(k+1)) [Σ r̄_j² − k(k+1)²/4]`` with k − 1 dof (Demšar's form, no tie
    correction, hence slightly conservative when ties occur) and the Iman–Davenport
    ``F = (N−1)χ²_F / (N(k−1) − χ²_F)`` with (k − 1, (k − 1)(N − 1)) dof.
    """
    if higher_is_better is None:
        ranks = _as_matrix(matrix)
        k = ranks.shape[1]
        if not np.allclose(ranks.sum(axis=1), k * (k + 1) / 2):
            raise ValueError(
                "rows are not within-task ranks 1..k; pass raw scores with "
                "higher_is_better=True/False instead"
            )
    else:
        ranks = rank_models(matrix, higher_is_better)
    n, k = ranks.shape
    if n < 2 or k < 2:
        raise ValueError(f"Friedman needs at least 2 tasks and 2 models; got N={n}, k={k}")
    mean_ranks = ranks.mean(axis=0)
    chi2 = float(12 * n / (k * (k + 1)) * (np.sum(mean_ranks**2) - k * (k + 1) ** 2 / 4))
    chi2 = max(chi2, 0.0)
    p = float(stats.chi2.sf(chi2, k - 1))
    dof1, dof2 = k - 1, (k - 1) * (n - 1)
    denom = n * (k - 1) - chi2
    if denom <= 0:  # every task ranks the models identically
        f, pf = float("inf"), 0.0
    else:
        f = float((n - 1) * chi2 / denom)
        pf = float(stats.f.sf(f, dof1, dof2))
    return FriedmanResult(chi2, p, k - 1, f, pf, (dof1, dof2), n, k, mean_ranks)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value ``q_α = studentized_range.ppf(1 − α, k, ∞) / √2`` (2.569 for k=4, α=.05)."""
    if int(k) < 2:
        raise ValueError(f"need at least k=2 models; got {k!r}")
    alpha = check_alpha(alpha)
    return float(stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf) / np.sqrt(2.0))


def nemenyi_cd(k: int, n_tasks: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference ``CD = q_α √(k(k+1)/(6N))`` (1.48 for k=4, N=10, α=.05)."""
    if int(n_tasks) < 1:
        raise ValueError(f"need at least one task; got n_tasks={n_tasks!r}")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_tasks)))


def nemenyi_pvalues(mean_ranks: ArrayLike, n_tasks: int) -> np.ndarray:
    """Pairwise Nemenyi p-values (k × k, diagonal 1) from mean ranks over N tasks.

    ``z_ij = |r̄_i − r̄_j| / √(k(k+1)/(6N))``, ``p_ij = P(Q_{k,∞} ≥ √2 · z_ij)``
    (as scikit-posthocs' ``posthoc_nemenyi_friedman``).
    """
    r = np.asarray(mean_ranks, dtype=float).ravel()
    k = r.size
    if k < 2 or int(n_tasks) < 1:
        raise ValueError(f"need k ≥ 2 mean ranks and N ≥ 1 tasks; got k={k}, N={n_tasks}")
    z = np.abs(r[:, None] - r[None, :]) / np.sqrt(k * (k + 1) / (6.0 * n_tasks))
    p = stats.studentized_range.sf(z * np.sqrt(2.0), k, np.inf)
    p = np.clip(p, 0.0, 1.0)
    np.fill_diagonal(p, 1.0)
    return p


def cd_cliques(mean_ranks: ArrayLike, cd: float) -> list[tuple[int, ...]]:
    """Groups of models not separated by the critical difference, as in a CD diagram.

    Models are ordered by mean rank; a clique is a maximal run of consecutive models
    whose mean-rank span (last − first) is smaller than ``cd``. Runs contained in another
    run are removed, and single models (no bar to draw) are not listed. Each clique is a
    tuple of the models' original indices, in rank order.
    """
    r = np.asarray(mean_ranks, dtype=float).ravel()
    order = np.argsort(r, kind="stable")
    sorted_r = r[order]
    cliques: list[tuple[int, ...]] = []
    last_end = -1
    for i in range(r.size):
        end = i
        while end + 1 < r.size and sorted_r[end + 1] - sorted_r[i] < cd:
            end += 1
        if end > i and end > last_end:
            cliques.append(tuple(int(j) for j in order[i : end + 1]))
        last_end = max(last_end, end)
    return cliques
