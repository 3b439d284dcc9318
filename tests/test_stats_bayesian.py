"""Bayesian signed-rank test cross-checked against baycomp (Benavoli et al., 2017)."""

from __future__ import annotations

import numpy as np
import pytest

# baycomp is in the dev extra: without it the cross-checks fail at import, not skip
from baycomp.multiple import Posterior, SignedRankTest

from graphnetz.stats import bayesian_signed_rank, signed_rank_posterior


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("rope", [0.0, 0.005, 0.02])
def test_posterior_samples_equal_baycomps_for_the_same_dirichlet_draws(seed, rope):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(4, 12))
    a = rng.normal(0.8, 0.01, n)
    b = a + rng.normal(rng.uniform(-0.02, 0.02), 0.01, n)
    # baycomp: diff = y − x, columns (left = x better, rope, right = y better); ours with
    # d = a − b has columns (B better, rope, A better), so x = b, y = a
    theirs = SignedRankTest.sample(b, a, rope, prior=0.5, nsamples=2000, random_state=seed)
    weights = np.ones(n + 1)
    weights[0] = 0.5
    draws = np.random.RandomState(seed).dirichlet(weights, 2000)
    ours = signed_rank_posterior(a - b, rope, draws)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_probabilities_agree_with_baycomp_within_monte_carlo_error(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(0.80, 0.01, 10)
    b = a + rng.normal(-0.006, 0.008, 10)
    ours = bayesian_signed_rank(a, b, 0.005, n_samples=50_000, seed=seed)
    theirs = Posterior(
        SignedRankTest.sample(b, a, 0.005, nsamples=50_000, random_state=seed)
    ).probs()
    # winner frequencies of 50 000 draws: standard error ≤ 0.0023 each
    assert (ours.p_b_better, ours.p_rope, ours.p_a_better) == pytest.approx(theirs, abs=0.012)
    assert ours.p_a_better + ours.p_rope + ours.p_b_better == pytest.approx(1.0)


def test_clear_winner_and_clear_equivalence():
    base = np.linspace(0.7, 0.9, 10)
    winner = bayesian_signed_rank(base + 0.05, base, 0.01, n_samples=5000)
    assert winner.p_a_better > 0.99
    same = bayesian_signed_rank(base + 0.0001 * np.arange(10) % 3, base, 0.01, n_samples=5000)
    assert same.p_rope > 0.99


def test_lower_is_better_flips_who_wins():
    base = np.linspace(1.0, 2.0, 8)
    res = bayesian_signed_rank(base + 0.3, base, 0.01, higher_is_better=False, n_samples=5000)
    assert res.p_b_better > 0.99


def test_same_seed_same_numbers_other_seed_other_draws():
    a, b = np.array([0.81, 0.80, 0.83, 0.79, 0.82]), np.array([0.80, 0.81, 0.80, 0.80, 0.80])
    first = bayesian_signed_rank(a, b, 0.005, n_samples=3000, seed=7)
    assert bayesian_signed_rank(a, b, 0.005, n_samples=3000, seed=7) == first
    assert bayesian_signed_rank(a, b, 0.005, n_samples=3000, seed=8) != first


@pytest.mark.parametrize("bad", [-0.1, float("nan")])
def test_negative_or_missing_rope_is_refused(bad):
    with pytest.raises(ValueError, match="rope"):
        bayesian_signed_rank([0.8, 0.9], [0.7, 0.8], bad)
