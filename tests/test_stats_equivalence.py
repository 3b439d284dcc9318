"""Paired TOST cross-checked against statsmodels; the four verdicts from their table."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.weightstats import ttost_paired

from graphnetz.stats import equivalence_verdict, tost_paired


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("margin", [0.005, 0.01, 0.05])
def test_tost_matches_statsmodels_ttost_paired(seed, margin):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 15))
    a = rng.normal(0.8, 0.01, n)
    b = a + rng.normal(rng.uniform(-0.02, 0.02), 0.008, n)
    ours = tost_paired(a, b, margin)
    p, (t1, p1, _), (t2, p2, _) = ttost_paired(a, b, -margin, margin)
    assert ours.pvalue == pytest.approx(p, rel=1e-10, abs=1e-14)
    assert (ours.t_lower, ours.p_lower) == pytest.approx((t1, p1), rel=1e-10, abs=1e-14)
    assert (ours.t_upper, ours.p_upper) == pytest.approx((t2, p2), rel=1e-10, abs=1e-14)


def test_tost_by_hand_on_three_seeds():
    # d = [0.001, 0.002, 0.003]: d̄ = 0.002, σ̂_d = 0.001, se = 0.001/√3; m = 0.01
    # t_L = 0.012/se = 20.785, t_U = −0.008/se = −13.856; p = P(T₂ ≤ −13.856) (the larger)
    res = tost_paired([0.801, 0.802, 0.803], [0.8, 0.8, 0.8], 0.01)
    se = 0.001 / math.sqrt(3)
    assert res.t_lower == pytest.approx(0.012 / se)
    assert res.t_upper == pytest.approx(-0.008 / se)
    # Student t with 2 dof: F(t) = 1/2 + t / (2 √(2 + t²))
    t = -0.008 / se
    assert res.pvalue == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)))


def test_constant_differences_inside_and_outside_the_margin():
    # binary fractions, so that d is exactly 0.25 on both seeds
    inside = tost_paired([0.75, 1.25], [0.5, 1.0], 0.5)
    outside = tost_paired([0.75, 1.25], [0.5, 1.0], 0.125)
    assert inside.pvalue == 0.0 and "inside the margin" in inside.note
    assert outside.pvalue == 1.0 and "not inside" in outside.note


def test_one_seed_is_untestable():
    assert math.isnan(tost_paired([0.8], [0.7], 0.01).pvalue)


@pytest.mark.parametrize("bad", [0.0, -0.01, float("nan"), float("inf"), "wide"])
def test_margin_must_be_positive_and_is_named(bad):
    with pytest.raises(ValueError, match="margin"):
        tost_paired([0.8, 0.9], [0.7, 0.8], bad)


@pytest.mark.parametrize(
    ("p_diff", "p_tost", "verdict"),
    [
        (0.01, 0.40, "different"),
        (0.40, 0.01, "equivalent"),
        (0.01, 0.01, "different but trivial"),
        (0.40, 0.40, "undetermined"),
        (0.05, 0.50, "different"),  # p = α rejects, as everywhere in the report
        (float("nan"), 0.01, "undetermined"),
    ],
)
def test_verdict_table(p_diff, p_tost, verdict):
    assert equivalence_verdict(p_diff, p_tost, alpha=0.05) == verdict
