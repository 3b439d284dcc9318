"""The report's decisions: duplicate results, Friedman rejecting, CD cliques named by model,
the ``agree`` column and a non-default alpha, cross-checked against scipy and
scikit-posthocs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from scipy import stats

from graphnetz.report import BenchmarkReport


def record(task: str, model: str, seed: int, value: float) -> dict:
    return {
        "schema_version": 1,
        "task": task,
        "model": model,
        "seed": seed,
        "status": "ok",
        "primary_metric": "accuracy",
        "direction": "max",
        "metrics": {"test": {"accuracy": value}},
    }


# --- duplicates ----------------------------------------------------------------------------


def test_a_duplicate_result_is_listed_warned_about_and_the_first_one_kept():
    records = [
        record("t", "a", 0, 0.70),
        record("t", "a", 1, 0.80),
        record("t", "a", 1, 0.20),  # the same run read twice, with another value
    ]
    with pytest.warns(UserWarning, match="1 duplicate"):
        report = BenchmarkReport.from_records(records)
    assert report.duplicates == [{"task": "t", "model": "a", "seed": 1, "metric": "accuracy"}]
    [row] = report.summary().to_dict("records")
    assert row["n"] == 2
    assert row["mean"] == pytest.approx(0.75)  # (0.70 + 0.80) / 2: the first 0.80 is kept


def test_distinct_runs_are_not_duplicates():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = BenchmarkReport.from_records([record("t", "a", s, 0.5 + s / 10) for s in (0, 1)])
    assert report.duplicates == []


# --- Friedman, Nemenyi and the CD cliques --------------------------------------------------

# Six tasks, four models. Odd tasks rank A > B > C > D, even tasks B > A > D > C, so the
# mean ranks are A = B = 1.5 and C = D = 3.5. Demšar's Friedman statistic:
#   chi2_F = 12 N / (k (k + 1)) * (sum_j R_j^2 - k (k + 1)^2 / 4)
#          = 12 * 6 / 20 * (2 * 1.5^2 + 2 * 3.5^2 - 25) = 3.6 * 4 = 14.4,  3 dof.
# The models are listed D, C, B, A, the reverse of their rank order.
TASK_SCORES = {
    "odd": {"A": 0.90, "B": 0.80, "C": 0.70, "D": 0.60},
    "even": {"A": 0.80, "B": 0.90, "C": 0.60, "D": 0.70},
}
MODELS = ["D", "C", "B", "A"]


def ranked_records() -> list[dict]:
    out = []
    for t in range(6):
        scores = TASK_SCORES["odd" if t % 2 == 0 else "even"]
        for model in MODELS:
            for seed in range(3):
                # small seed noise that never changes a task's ranking
                out.append(
                    record(f"task{t}", model, seed, scores[model] + 0.001 * seed + 0.0001 * t)
                )
    return out


def mean_matrix(report: BenchmarkReport) -> pd.DataFrame:
    sel = report.selected()
    return sel.groupby(["task", "model"])["value"].mean().unstack("model")[list("ABCD")]


def test_friedman_statistic_and_p_value_match_scipy():
    report = BenchmarkReport.from_records(ranked_records())
    ranks = report.friedman()
    assert ranks.applicable
    means = mean_matrix(report)
    scipy_result = stats.friedmanchisquare(*(means[m].to_numpy() for m in means))  # no ties
    assert ranks.friedman.statistic == pytest.approx(14.4)
    assert ranks.friedman.statistic == pytest.approx(scipy_result.statistic)
    assert ranks.friedman.pvalue == pytest.approx(scipy_result.pvalue)
    assert ranks.friedman.dof == 3
    assert dict(ranks.mean_ranks) == {"A": 1.5, "B": 1.5, "C": 3.5, "D": 3.5}


def test_friedman_rejects_at_the_default_alpha():
    ranks = BenchmarkReport.from_records(ranked_records()).friedman()
    assert ranks.friedman.pvalue == pytest.approx(stats.chi2.sf(14.4, 3))  # 0.0024
    assert ranks.rejects is True
    assert ranks.conclusion.startswith("The Friedman test rejects equal performance")


def test_a_stricter_alpha_turns_the_same_results_into_no_rejection():
    ranks = BenchmarkReport.from_records(ranked_records(), alpha=0.001).friedman()
    assert ranks.alpha == 0.001
    assert ranks.rejects is False  # p = 0.0024 > 0.001
    assert (
        "does not reject" in ranks.conclusion and "no model is declared better" in ranks.conclusion
    )


def test_cd_cliques_name_the_models_that_are_not_separated():
    # CD = q_0.05 * sqrt(k (k + 1) / (6 N)) = 2.569 * sqrt(20 / 36) = 1.915 (Demšar's q for
    # k = 4); A and B (0 apart) and C and D (0 apart) are cliques, the pairs across them
    # are 2.0 apart and separated.
    cd = BenchmarkReport.from_records(ranked_records()).critical_difference()
    assert cd.cd == pytest.approx(2.569 * np.sqrt(20 / 36), abs=1e-3)
    assert {frozenset(c) for c in cd.cliques} == {frozenset("AB"), frozenset("CD")}


def test_a_non_default_alpha_gives_demsars_critical_difference():
    # Demšar (2006), Table 5(b): q_0.10 = 2.291 for k = 4, so CD = 2.291 * sqrt(20 / 36)
    cd = BenchmarkReport.from_records(ranked_records(), alpha=0.10).critical_difference()
    assert cd.q_alpha == pytest.approx(2.291, abs=5e-4)
    assert cd.cd == pytest.approx(2.291 * np.sqrt(20 / 36), abs=1e-3)


def test_nemenyi_p_values_match_scikit_posthocs():
    report = BenchmarkReport.from_records(ranked_records())
    ours = report.critical_difference().nemenyi_p
    theirs = sp.posthoc_nemenyi_friedman(mean_matrix(report).reset_index(drop=True))
    for a in "ABCD":
        for b in "ABCD":
            assert ours.loc[a, b] == pytest.approx(theirs.loc[a, b], abs=1e-6), (a, b)


# --- pairwise tests, agree and alpha -------------------------------------------------------

# One task, two models, five seeds; A - B = 0.10, 0.11, ..., 0.14. The paired t-test is
# overwhelming, but the exact Wilcoxon test on 5 pairs cannot go below p = 2 / 2^5 = 0.0625.
B_VALUES = [0.50, 0.60, 0.55, 0.65, 0.58]
DIFFS = [0.10, 0.11, 0.12, 0.13, 0.14]


def two_model_records() -> list[dict]:
    out = [record("t", "B", s, v) for s, v in enumerate(B_VALUES)]
    out += [
        record("t", "A", s, v + d) for s, (v, d) in enumerate(zip(B_VALUES, DIFFS, strict=True))
    ]
    return out


def only_pair(report: BenchmarkReport, method: str | None = None) -> dict:
    [row] = report.pairwise(method).to_dict("records")
    return row


def test_pairwise_statistics_match_scipy():
    row = only_pair(BenchmarkReport.from_records(two_model_records()))
    a = np.array(B_VALUES) + np.array(DIFFS)
    b = np.array(B_VALUES)
    first, second = (a, b) if row["model_a"] == "A" else (b, a)
    t = stats.ttest_rel(first, second)
    w = stats.wilcoxon(first, second, method="exact")
    assert row["t_statistic"] == pytest.approx(t.statistic)
    assert row["t_p"] == pytest.approx(t.pvalue)
    assert row["w_statistic"] == pytest.approx(w.statistic)
    assert row["w_p"] == pytest.approx(w.pvalue) and row["w_p"] == pytest.approx(0.0625)
    assert row["t_p_holm"] == row["t_p"]  # one pair: Holm changes nothing


def test_agree_is_false_when_only_the_t_test_rejects():
    report = BenchmarkReport.from_records(two_model_records())
    row = only_pair(report, "t")
    assert not pd.isna(row["agree"]) and not row["agree"]
    assert row["significant"] and row["better"] == "A"
    row = only_pair(report, "wilcoxon")
    assert not row["significant"] and row["better"] == ""


def test_alpha_010_lets_wilcoxon_reject_too_and_the_tests_agree():
    report = BenchmarkReport.from_records(two_model_records(), alpha=0.10)
    row = only_pair(report, "wilcoxon")
    assert bool(row["agree"]) is True
    assert row["significant"] and row["better"] == "A"


def test_agree_is_missing_for_an_untestable_pair():
    records = [record("t", "A", 0, 0.9), record("t", "B", 0, 0.8)]  # one common seed
    row = only_pair(BenchmarkReport.from_records(records))
    assert pd.isna(row["agree"]) and not row["significant"]
    assert row["note"] == "untestable: only 1 common seed"


def test_holm_adjusted_p_values_match_statsmodels():
    from statsmodels.stats.multitest import multipletests

    # three models on one task: three pairs, Holm over the three paired-t p-values
    rng = np.random.default_rng(0)
    base = rng.normal(0.7, 0.02, 6)
    values = {
        "A": base + 0.03 + rng.normal(0, 0.01, 6),
        "B": base + 0.01 + rng.normal(0, 0.01, 6),
        "C": base,
    }
    records = [record("t", m, s, float(v[s])) for m, v in values.items() for s in range(6)]
    pw = BenchmarkReport.from_records(records).pairwise()
    for column in ("t_p", "w_p"):
        assert pw[column].notna().all()
        expected = multipletests(pw[column].to_numpy(), method="holm")[1]
        np.testing.assert_allclose(pw[f"{column}_holm"].to_numpy(), expected, rtol=1e-9)
