"""Textbook values and degenerate cases the report must reproduce (intervals, paired tests, ranks)."""

import math
import warnings

import numpy as np
import pytest

from graphnetz.stats import (
    bootstrap_interval,
    cd_cliques,
    friedman_test,
    holm_adjust,
    nemenyi_cd,
    nemenyi_q,
    paired_t_test,
    rank_models,
    t_interval,
    wilcoxon_test,
)


def test_nemenyi_cd_demsar_table():
    # Demšar (2006), Table 5: q_0.05 = 2.569 for k = 4; CD = 2.569 * sqrt(20/60) = 1.48.
    assert nemenyi_q(4, 0.05) == pytest.approx(2.569, abs=5e-4)
    assert nemenyi_cd(4, 10, 0.05) == pytest.approx(1.48, abs=5e-3)


def test_smallest_exact_wilcoxon_p_for_ten_seeds_and_holm_over_six_pairs():
    a = np.arange(1.0, 11.0)  # every difference positive: the most extreme outcome
    p = wilcoxon_test(a, np.zeros(10)).pvalue
    assert p == pytest.approx(2 / 2**10)
    assert holm_adjust([p] * 6)[0] == pytest.approx(6 * 2 / 1024, abs=1e-12)
    assert holm_adjust([p] * 6)[0] == pytest.approx(0.0117, abs=1e-4)


def test_five_seeds_six_pairs_cannot_reach_significance():
    # The most extreme outcome for S = 5 gives p = 2/32 = 0.0625 before any correction.
    p = wilcoxon_test(np.arange(1.0, 6.0), np.zeros(5)).pvalue
    assert p == pytest.approx(2 / 32)
    assert holm_adjust([p] * 6).min() > 0.05


def test_all_zero_differences_give_p_one_with_a_note():
    a = np.array([0.8, 0.7, 0.9])
    for res in (wilcoxon_test(a, a), paired_t_test(a, a)):
        assert res.pvalue == 1.0
        assert "zero" in res.note


def test_one_seed_interval_is_undefined_not_zero():
    res = t_interval([0.81])
    assert res.mean == 0.81
    assert math.isnan(res.std) and math.isnan(res.half_width)
    assert math.isnan(bootstrap_interval([0.81]).half_width)


def test_bootstrap_is_reproducible_under_a_seed():
    x = [0.80, 0.82, 0.79, 0.85, 0.81]
    assert bootstrap_interval(x, seed=7) == bootstrap_interval(x, seed=7)
    assert bootstrap_interval(x, seed=7) != bootstrap_interval(x, seed=8)


def test_bootstrap_interval_brackets_the_mean_and_half_width_is_symmetric():
    res = bootstrap_interval([1.0, 2.0, 3.0, 4.0, 10.0])
    assert res.low < res.mean < res.high
    assert res.half_width == pytest.approx((res.high - res.low) / 2)


def test_ranking_with_ties_and_direction_per_task():
    scores = np.array(
        [
            [0.9, 0.8, 0.8],  # accuracy: higher is better; tie for 2nd/3rd
            [0.1, 0.3, 0.2],  # MAE: lower is better
        ]
    )
    ranks = rank_models(scores, higher_is_better=[True, False])
    np.testing.assert_array_equal(ranks, [[1, 2.5, 2.5], [1, 3, 2]])


def test_friedman_accepts_raw_scores_with_direction():
    scores = np.array([[0.9, 0.8, 0.7], [0.8, 0.9, 0.7], [0.9, 0.7, 0.8]])
    by_rank = friedman_test(rank_models(scores, True))
    by_score = friedman_test(scores, higher_is_better=True)
    # mean ranks 4/3, 2, 8/3 by hand: chi2 = 12*3/12 * (16/9 + 36/9 + 64/9 - 12) = 8/3
    assert by_rank.statistic == pytest.approx(8 / 3)
    assert by_score.statistic == pytest.approx(8 / 3)


def test_friedman_refuses_rows_that_are_not_ranks():
    with pytest.raises(ValueError, match="not within-task ranks"):
        friedman_test([[0.9, 0.8], [0.7, 0.6]])


def test_cliques_for_a_hand_made_rank_table():
    # mean ranks (model index: rank): 0:1.0 1:1.5 2:2.4 3:3.5 4:3.7 with CD = 1.2
    # runs with span < 1.2: {0,1} (2.4-1.0 = 1.4 too far), {1,2} (0.9), {2} + {3,4}?
    # from 2.4: 3.5-2.4 = 1.1 < 1.2, 3.7-2.4 = 1.3 -> {2,3}; from 3.5: {3,4}
    cliques = cd_cliques([1.0, 1.5, 2.4, 3.5, 3.7], cd=1.2)
    assert cliques == [(0, 1), (1, 2), (2, 3), (3, 4)]


def test_cliques_drop_sub_cliques_and_follow_rank_order():
    # given out of rank order: ranks 2.0 (a), 1.0 (b), 1.2 (c), 3.5 (d); CD = 1.1
    # from b: {b, c, a} (span 1.0); from c: {c, a} is a sub-clique; from a: {a} alone
    cliques = cd_cliques([2.0, 1.0, 1.2, 3.5], cd=1.1)
    assert cliques == [(1, 2, 0)]


def test_cliques_single_group_when_all_within_cd():
    assert cd_cliques([1.5, 2.0, 2.5], cd=2.0) == [(0, 1, 2)]


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_alpha_outside_unit_interval_is_refused_with_the_value(bad):
    with pytest.raises(ValueError, match=repr(bad)):
        t_interval([1.0, 2.0], alpha=bad)


def test_no_warnings_on_degenerate_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        zero = wilcoxon_test([1.0, 1.0], [1.0, 1.0])
        constant = paired_t_test([1.0, 2.0], [0.0, 1.0])
    assert (zero.statistic, zero.pvalue) == (0.0, 1.0)
    assert constant.pvalue == 0.0  # what it returns is the next test's subject


def test_constant_nonzero_differences_give_p_zero_with_a_note():
    # d = [1, 1]: σ̂_d = 0 with d̄ = 1, so T = d̄ / (σ̂_d / √S) → +∞ and p = 0; the pair
    # differs on every seed by the same amount and must not be reported as "not significant"
    result = paired_t_test([1.0, 2.0], [0.0, 1.0])
    assert result.statistic == math.inf and result.pvalue == 0.0
    assert "zero variance" in result.note
    negative = paired_t_test([0.0, 1.0, 2.0], [0.5, 1.5, 2.5])
    assert negative.statistic == -math.inf and negative.pvalue == 0.0


def test_all_zero_differences_keep_p_one():
    result = paired_t_test([0.5, 0.7, 0.9], [0.5, 0.7, 0.9])
    assert (result.statistic, result.pvalue) == (0.0, 1.0)
    # the rank test is defined here: both differences positive, exact p = 2 * (1/2)^2 = 0.5
    assert wilcoxon_test([1.0, 2.0], [0.0, 1.0]).pvalue == pytest.approx(0.5)
