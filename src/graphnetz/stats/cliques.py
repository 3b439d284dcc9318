"""Cliques of a CD diagram drawn from pairwise tests: Wilcoxon signed-rank + Holm."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .multiple import holm_adjust
from .paired import wilcoxon_test
from .ranking import _as_matrix


def wilcoxon_holm(
    matrix: ArrayLike, higher_is_better: bool | Sequence[bool] = True
) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise Wilcoxon signed-rank tests of the k models over the N tasks (rows of the
    N × k score matrix, e.g. per-task means), unadjusted and Holm-adjusted over the
    k(k − 1)/2 pairs: two k × k symmetric matrices with diagonal 1.

    Lower-is-better tasks are negated first, so each difference favours the better model;
    zero differences are dropped (Wilcoxon's rule, :func:`wilcoxon_test`).
    """
    m = _as_matrix(matrix)
    flags = np.broadcast_to(np.asarray(higher_is_better, dtype=bool), (m.shape[0],))
    signed = np.where(flags[:, None], m, -m)
    k = m.shape[1]
    if k < 2 or m.shape[0] < 1:
        raise ValueError(f"need at least 1 task and 2 models; got shape {m.shape}")
    pairs = list(itertools.combinations(range(k), 2))
    raw = np.array([wilcoxon_test(signed[:, i], signed[:, j]).pvalue for i, j in pairs])
    adjusted = holm_adjust(raw)
    out_raw, out_holm = np.ones((k, k)), np.ones((k, k))
    for (i, j), p, q in zip(pairs, raw, adjusted, strict=True):
        out_raw[i, j] = out_raw[j, i] = p
        out_holm[i, j] = out_holm[j, i] = q
    return out_raw, out_holm


def cliques_from_significance(
    mean_ranks: ArrayLike, significant: ArrayLike
) -> list[tuple[int, ...]]:
    """Groups of models no pair of which differs significantly, as bars of a CD diagram.

    Models are ordered by mean rank; a clique is a maximal run of consecutive models in
    which *every* pair is not significant (``significant[i, j]`` False). Runs contained in
    another run are removed and single models are not listed. With Nemenyi's rule
    (significant ⇔ |r̄_i − r̄_j| ≥ CD) this is :func:`cd_cliques`.
    """
    r = np.asarray(mean_ranks, dtype=float).ravel()
    sig = np.asarray(significant, dtype=bool)
    if sig.shape != (r.size, r.size):
        raise ValueError(f"significant must be {r.size} × {r.size}; got shape {sig.shape}")
    order = np.argsort(r, kind="stable")
    cliques: list[tuple[int, ...]] = []
    last_end = -1
    for i in range(r.size):
        end = i
        while end + 1 < r.size and not sig[order[end + 1], order[i : end + 1]].any():
            end += 1
        if end > i and end > last_end:
            cliques.append(tuple(int(j) for j in order[i : end + 1]))
        last_end = max(last_end, end)
    return cliques
