"""Rank stability checked against brute force (every resample enumerated) and by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from graphnetz.stats import (
    nemenyi_cd,
    rank_position_probabilities,
    rank_stability,
    tasks_needed,
)

RANKS = np.array([[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0]])  # N = 3, k = 3


def _exact_bootstrap(ranks):
    """Every one of the N^N equally likely resamples: rank probabilities and verdicts."""
    n, k = ranks.shape
    cd = nemenyi_cd(k, n)
    observed = ranks.mean(axis=0)
    seen = np.abs(observed[:, None] - observed[None, :]) >= cd
    probs, agree = np.zeros((k, k)), np.zeros((k, k))
    resamples = list(itertools.product(range(n), repeat=n))
    for rows in resamples:
        means = ranks[list(rows)].mean(axis=0)
        for i in range(k):
            lo = int((means < means[i]).sum())
            ties = int((means == means[i]).sum())
            probs[i, lo : lo + ties] += 1.0 / ties
        agree += (np.abs(means[:, None] - means[None, :]) >= cd) == seen
    return probs / len(resamples), agree / len(resamples)


def test_bootstrap_rank_probabilities_converge_to_the_enumerated_bootstrap():
    exact_probs, exact_agree = _exact_bootstrap(RANKS)
    res = rank_stability(RANKS, n_resamples=40_000, seed=1)
    # 40 000 draws: standard error ≤ 0.0025 per entry
    np.testing.assert_allclose(res.rank_probabilities, exact_probs, atol=0.012)
    np.testing.assert_allclose(res.bootstrap_agreement, exact_agree, atol=0.012)


def test_rank_probabilities_form_a_doubly_stochastic_matrix():
    res = rank_stability(RANKS, n_resamples=500, seed=0)
    np.testing.assert_allclose(res.rank_probabilities.sum(axis=0), 1.0)
    np.testing.assert_allclose(res.rank_probabilities.sum(axis=1), 1.0)


def test_tied_models_share_the_positions_they_span():
    shares = rank_position_probabilities(np.array([[1.5, 1.5, 3.0]]))[0]
    np.testing.assert_allclose(shares, [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])


def test_leave_one_task_out_by_hand():
    # dropping task 0 leaves rows 1 and 2: means (1.5, 2.0, 2.5); etc.
    res = rank_stability(RANKS, n_resamples=10, seed=0)
    expected = [[1.5, 2.0, 2.5], [1.5, 1.5, 3.0], [1.0, 2.5, 2.5]]
    np.testing.assert_allclose(res.loo_mean_ranks, expected)
    # observed means (4/3, 2, 8/3), CD(3, 3) = 1.913: nothing separated; CD(3, 2) = 2.343
    # separates nothing of the LOO tables either, so every verdict survives
    assert not res.separated.any()
    np.testing.assert_allclose(res.loo_agreement, 1.0)


def test_a_unanimous_ranking_is_stable_under_resampling():
    # model 0 always best, model 2 always worst on 12 tasks: separated (gap 2 ≥ CD ≈ 0.96)
    ranks = np.tile([1.0, 2.0, 3.0], (12, 1))
    res = rank_stability(ranks, n_resamples=200, seed=0)
    assert res.separated[0, 2] and res.bootstrap_agreement[0, 2] == 1.0
    assert res.order_stability == 1.0


def _exact_order_stability(ranks):
    """Share of the N^N resamples in which every pair the observed mean ranks order keeps
    that order strictly (a tie in a resample breaks it)."""
    n, k = ranks.shape
    observed = ranks.mean(axis=0)
    ordered = [(i, j) for i, j in itertools.permutations(range(k), 2) if observed[i] < observed[j]]
    kept = 0
    for rows in itertools.product(range(n), repeat=n):
        means = ranks[list(rows)].mean(axis=0)
        kept += all(means[i] < means[j] for i, j in ordered)
    return kept / n**n


@pytest.mark.parametrize(
    ("ranks", "exact"),
    [
        # N = 5, k = 4; the order is 0, 1, 2, 3 with no tie in the observed mean ranks
        ([[1, 2, 3, 4], [2, 1, 3, 4], [1, 3, 2, 4], [1, 2, 4, 3], [3, 1, 2, 4]], 1521 / 3125),
        # tied ranks within tasks; the observed order is 1, 3, 2, 0 (mean ranks 1.8, 1.9,
        # 2.7, 3.6), not the column order
        (
            [[4, 2.5, 2.5, 1], [4, 1, 3, 2], [4, 3, 2, 1], [3, 1.5, 4, 1.5], [3, 1, 2, 4]],
            1101 / 3125,
        ),
    ],
)
def test_order_stability_converges_to_the_enumerated_bootstrap(ranks, exact):
    ranks = np.array(ranks, dtype=float)
    assert _exact_order_stability(ranks) == pytest.approx(exact)
    res = rank_stability(ranks, n_resamples=40_000, seed=1)
    # standard error ≤ 0.0025; counting resampled ties as the observed order would add
    # 0.157 and 0.067 here
    assert res.order_stability == pytest.approx(exact, abs=0.012)


def test_order_stability_is_undefined_when_observed_mean_ranks_tie():
    # models 0 and 1 share mean rank 1.5: no single order to reproduce
    ranks = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [1.0, 2.0, 3.0], [2.0, 1.0, 3.0]])
    assert math.isnan(rank_stability(ranks, n_resamples=500, seed=0).order_stability)


def test_same_seed_same_result():
    a = rank_stability(RANKS, n_resamples=300, seed=4)
    b = rank_stability(RANKS, n_resamples=300, seed=4)
    np.testing.assert_array_equal(a.rank_probabilities, b.rank_probabilities)


@pytest.mark.parametrize(("gap", "k"), [(1.0, 3), (0.5, 4), (0.25, 5), (1.7, 6)])
def test_tasks_needed_is_the_smallest_n_whose_cd_is_within_the_gap(gap, k):
    n = tasks_needed(gap, k)
    assert nemenyi_cd(k, int(n)) <= gap < nemenyi_cd(k, int(n) - 1)


def test_tasks_needed_by_hand():
    # k = 3, α = 0.05: q = 2.343, CD(N) = 2.343 √(2/N); a gap of 1 needs N ≥ 2·2.343² = 10.98
    assert tasks_needed(1.0, 3) == 11
    assert math.isinf(tasks_needed(0.0, 3))


def test_stability_needs_two_tasks():
    with pytest.raises(ValueError, match="N=1"):
        rank_stability([[1.0, 2.0]])
