"""Seed-count advisor checked against statsmodels' power solver for the one-sample t-test."""

import pytest
from statsmodels.stats.power import TTestPower

from graphnetz.stats import TooManySeeds, min_detectable_difference, paired_t_power, seeds_needed


@pytest.mark.parametrize("effect", [0.02, 0.05, 0.13, 0.5, 0.8, 1.2, 3.0])
def test_seeds_needed_is_ceiling_of_statsmodels_solution(effect):
    import math

    n_real = TTestPower().solve_power(effect_size=effect, power=0.8, alpha=0.05)
    expected = max(2, math.ceil(n_real))
    assert seeds_needed(diff_std=0.02, delta=effect * 0.02, power=0.8, alpha=0.05) == expected


@pytest.mark.parametrize("n", [3, 5, 10])
def test_power_matches_statsmodels(n):
    ref = TTestPower().power(effect_size=0.7, nobs=n, alpha=0.05, alternative="two-sided")
    assert paired_t_power(diff_std=1.0, delta=0.7, n_seeds=n) == pytest.approx(ref, rel=1e-6)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_min_detectable_difference_matches_statsmodels(n):
    effect = TTestPower().solve_power(nobs=n, power=0.8, alpha=0.05)
    assert min_detectable_difference(0.03, n, 0.8, 0.05) == pytest.approx(effect * 0.03, rel=1e-4)


def test_invalid_power_is_refused_with_value():
    with pytest.raises(ValueError, match="1.5"):
        seeds_needed(0.1, 0.05, power=1.5)


def test_a_negligible_difference_raises_too_many_seeds_after_few_power_evaluations(
    monkeypatch,
):
    """Bracketed by doubling, not tried seed count by seed count: about log2(100 000)
    power evaluations before giving up."""
    from graphnetz.stats import power as power_module

    calls = []
    real = power_module.paired_t_power

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(power_module, "paired_t_power", counted)
    with pytest.raises(TooManySeeds, match="100000"):
        seeds_needed(diff_std=1.0, delta=1e-4)
    assert 2 <= len(calls) <= 20
