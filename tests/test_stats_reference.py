"""Each statistic cross-checked against an independent implementation (scipy/statsmodels)."""

import numpy as np
import pytest
import scikit_posthocs as sp
from scipy import stats
from statsmodels.stats.multitest import multipletests

from graphnetz.stats import (
    bootstrap_interval,
    cohens_dz,
    friedman_test,
    holm_adjust,
    mean_difference,
    nemenyi_pvalues,
    paired_t_test,
    rank_models,
    t_interval,
    wilcoxon_test,
)


@pytest.mark.parametrize("n", [2, 3, 5, 10, 30])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_t_interval_matches_scipy(n, alpha):
    x = np.random.default_rng([1, n]).normal(0.8, 0.02, size=n)
    low, high = stats.t.interval(1 - alpha, n - 1, loc=x.mean(), scale=stats.sem(x))
    res = t_interval(x, alpha=alpha)
    assert res.n == n
    assert res.std == pytest.approx(np.std(x, ddof=1))
    assert res.low == pytest.approx(low)
    assert res.high == pytest.approx(high)
    assert res.half_width == pytest.approx((high - low) / 2)


def test_bootstrap_interval_close_to_scipy_percentile_bootstrap():
    x = np.random.default_rng(2).normal(0.0, 1.0, size=20)
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=10_000, method="percentile", random_state=0
    ).confidence_interval
    res = bootstrap_interval(x, n_resamples=10_000, seed=1)
    # different random streams: agreement up to Monte-Carlo error
    assert res.low == pytest.approx(ref.low, abs=0.05)
    assert res.high == pytest.approx(ref.high, abs=0.05)


@pytest.mark.parametrize("n", [2, 4, 7, 15])
def test_paired_t_matches_ttest_rel(n):
    rng = np.random.default_rng([3, n])
    a = rng.normal(0.80, 0.02, size=n)
    b = a - rng.normal(0.01, 0.02, size=n)
    ref = stats.ttest_rel(a, b)
    res = paired_t_test(a, b)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)


@pytest.mark.parametrize("n", [3, 5, 8, 10, 12, 20])
def test_wilcoxon_exact_matches_scipy_without_zeros(n):
    d = np.random.default_rng([4, n]).normal(0.3, 1.0, size=n)
    ref = stats.wilcoxon(d, method="exact")
    res = wilcoxon_test(d, np.zeros(n))
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert res.method == "wilcoxon exact"


def test_wilcoxon_with_zeros_matches_scipy_on_the_non_zero_differences():
    # Zero-drop rule: identical to scipy's exact test on the non-zero differences.
    a = np.array([0.81, 0.80, 0.79, 0.83, 0.82, 0.78, 0.80, 0.84])
    b = np.array([0.80, 0.80, 0.77, 0.80, 0.82, 0.74, 0.79, 0.79])
    d = a - b
    ref = stats.wilcoxon(d[d != 0], method="exact")
    res = wilcoxon_test(a, b)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert "2 zero difference(s) dropped" in res.note


def test_wilcoxon_large_sample_uses_normal_approximation_like_scipy():
    d = np.random.default_rng(5).normal(0.2, 1.0, size=80)
    ref = stats.wilcoxon(d, method="approx")
    res = wilcoxon_test(d, np.zeros_like(d))
    assert res.pvalue == pytest.approx(ref.pvalue)


def test_wilcoxon_normal_approximation_with_ties_and_zeros_matches_scipy():
    """Whole-number differences: 29 zeros (dropped) and 91 non-zero |d| in only 4 tie
    groups, so the variance's tie term Σ(t³ − t)/48 matters (without it p = 0.049)."""
    d = np.round(np.random.default_rng(9).normal(0.25, 1.5, size=120))
    nonzero = d[d != 0]
    assert nonzero.size > 50 and np.unique(np.abs(nonzero)).size == 4
    # scipy: zeros dropped before ranking, tie-corrected variance, no continuity correction
    ref = stats.wilcoxon(d, zero_method="wilcox", correction=False, method="approx")
    res = wilcoxon_test(d, np.zeros_like(d))
    assert res.method == "wilcoxon normal approximation"
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert "29 zero difference(s) dropped" in res.note


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_statsmodels(seed):
    p = np.random.default_rng(seed).uniform(0, 0.2, size=7)
    expected = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(holm_adjust(p), expected)


def test_holm_ignores_nan_entries_in_m():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    expected = multipletests([0.01, 0.04, 0.03], method="holm")[1]
    out = holm_adjust(p)
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2, 3]], expected)


def test_friedman_matches_scipy():
    scores = np.random.default_rng(6).normal(size=(10, 4)) + np.array([0.0, 0.3, 0.6, 0.9])
    ref = stats.friedmanchisquare(*scores.T)
    res = friedman_test(rank_models(scores, higher_is_better=True))
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert res.dof == 3


@pytest.mark.parametrize("higher_is_better", [True, False])
def test_friedman_with_ties_is_scipys_statistic_without_its_tie_correction(higher_is_better):
    """Whole-number scores tie within tasks. scipy divides χ² by the tie correction
    C = 1 − Σ(t³ − t) / (N k (k² − 1)); our χ²_F is Demšar's uncorrected form, so it
    equals scipy's χ² times C (and the tie-free form would not: here C = 0.9)."""
    scores = np.random.default_rng(10).integers(0, 4, size=(12, 4)) + np.array([0, 0, 1, 1])
    n, k = scores.shape
    ties = sum((t**3 - t).sum() for t in (np.unique(row, return_counts=True)[1] for row in scores))
    correction = 1 - ties / (n * k * (k * k - 1))
    assert correction < 0.95
    ref = stats.friedmanchisquare(*scores.T)
    res = friedman_test(scores.astype(float), higher_is_better=higher_is_better)
    assert res.statistic == pytest.approx(ref.statistic * correction)
    assert res.pvalue == pytest.approx(stats.chi2.sf(ref.statistic * correction, k - 1))
    # the same through an explicit rank table with average ranks for ties
    ranks = rank_models(scores.astype(float), higher_is_better=higher_is_better)
    assert friedman_test(ranks).statistic == pytest.approx(res.statistic)


def test_iman_davenport_from_its_formula():
    scores = np.random.default_rng(7).normal(size=(8, 5))
    chi2 = stats.friedmanchisquare(*scores.T).statistic
    n, k = scores.shape
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    res = friedman_test(scores, higher_is_better=True)
    assert res.iman_davenport == pytest.approx(f)
    assert res.iman_davenport_pvalue == pytest.approx(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    assert res.iman_davenport_dof == (k - 1, (k - 1) * (n - 1))


def test_nemenyi_pvalues_match_scikit_posthocs():
    scores = np.random.default_rng(8).normal(size=(12, 4)) + np.array([0.0, 0.2, 0.8, 1.2])
    ref = sp.posthoc_nemenyi_friedman(scores).to_numpy()
    ranks = rank_models(scores, higher_is_better=True)
    res = nemenyi_pvalues(ranks.mean(axis=0), n_tasks=12)
    np.testing.assert_allclose(res, ref, atol=1e-6)


def test_cohens_dz_is_the_paired_t_statistic_over_root_n():
    # T = d̄ / (σ̂_d / √S), so d_z = d̄ / σ̂_d = T / √S with T from scipy's ttest_rel
    rng = np.random.default_rng(11)
    a = rng.normal(0.80, 0.02, size=9)
    b = a - rng.normal(0.01, 0.02, size=9)
    assert cohens_dz(a, b) == pytest.approx(stats.ttest_rel(a, b).statistic / np.sqrt(9))
    assert cohens_dz(b, a) == pytest.approx(-cohens_dz(a, b))


def test_mean_difference_is_ttest_rels_confidence_interval():
    a = np.array([0.82, 0.80, 0.85, 0.81])
    b = np.array([0.80, 0.79, 0.80, 0.80])
    ref = stats.ttest_rel(a, b).confidence_interval(confidence_level=0.9)
    md = mean_difference(a, b, alpha=0.1)
    assert md.mean == pytest.approx(0.0225)  # (0.02 + 0.01 + 0.05 + 0.01) / 4
    assert (md.low, md.high) == pytest.approx((ref.low, ref.high))


def test_wilcoxon_ties_absolute_differences_equal_but_for_float_rounding():
    """|3/7 - 6/7| and |4/7 - 7/7| differ in the last bit: the same |d|, so they tie;
    scipy on the differences rounded to 12 digits agrees."""
    a = np.array([3, 4, 6, 7, 0, 1]) / 7
    b = np.array([6, 7, 1, 2, 6, 3]) / 7
    ours = wilcoxon_test(a, b)
    ref = stats.wilcoxon(np.round(a - b, 12))  # scipy: exact null with ties, n <= 50
    assert ours.statistic == ref.statistic and ours.pvalue == pytest.approx(ref.pvalue)
    assert ours.pvalue == pytest.approx(0.78125)
