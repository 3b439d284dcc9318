"""Cliques from Wilcoxon + Holm cross-checked against scipy, statsmodels, scikit-posthocs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from graphnetz.stats import cd_cliques, cliques_from_significance, nemenyi_cd, wilcoxon_holm


def _scores(seed, n=12, k=4):
    rng = np.random.default_rng(seed)
    return rng.normal(0.8, 0.05, (n, 1)) + rng.normal(0, 0.01, (n, k)) + np.arange(k) * 0.004


@pytest.mark.parametrize("seed", range(4))
def test_wilcoxon_holm_matches_scipy_and_statsmodels(seed):
    m = _scores(seed)
    raw, holm = wilcoxon_holm(m)
    pairs = list(itertools.combinations(range(m.shape[1]), 2))
    expected_raw = [scipy_stats.wilcoxon(m[:, i], m[:, j]).pvalue for i, j in pairs]
    expected_holm = multipletests(expected_raw, method="holm")[1]
    np.testing.assert_allclose([raw[i, j] for i, j in pairs], expected_raw, rtol=1e-10)
    np.testing.assert_allclose([holm[i, j] for i, j in pairs], expected_holm, rtol=1e-10)


def test_wilcoxon_holm_matches_scikit_posthocs():
    m = _scores(9)
    _, holm = wilcoxon_holm(m)
    long = pd.DataFrame(
        [(t, j, m[t, j]) for t in range(m.shape[0]) for j in range(m.shape[1])],
        columns=["block", "group", "value"],
    )
    theirs = sp.posthoc_wilcoxon(
        long, val_col="value", group_col="group", p_adjust="holm", sort=True
    ).to_numpy()
    np.testing.assert_allclose(holm, theirs, rtol=1e-10)


def test_lower_is_better_tasks_are_negated_without_changing_two_sided_p():
    m = _scores(2)
    _, up = wilcoxon_holm(m, True)
    _, down = wilcoxon_holm(-m, False)
    np.testing.assert_allclose(up, down)


def test_nemenyi_rule_reproduces_cd_cliques():
    rng = np.random.default_rng(0)
    for _ in range(50):
        ranks = rng.uniform(1, 5, 5)
        cd = nemenyi_cd(5, 8)
        sig = np.abs(ranks[:, None] - ranks[None, :]) >= cd
        assert cliques_from_significance(ranks, sig) == cd_cliques(ranks, cd)


def test_a_run_needs_every_pair_not_significant():
    # order a, b, c by rank; a–b and b–c are not significant but a–c is
    sig = np.array([[False, False, True], [False, False, False], [True, False, False]])
    assert cliques_from_significance([1.0, 2.0, 3.0], sig) == [(0, 1), (1, 2)]


def test_nothing_significant_gives_one_clique_in_rank_order():
    assert cliques_from_significance([2.0, 1.0, 3.0], np.zeros((3, 3), bool)) == [(1, 0, 2)]
