"""The report's equivalence section: TOST Holm within each task, verdicts, Bayesian
probabilities by the metric's direction, and the test on per-task means."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from report_fixtures import VALUES, make_records
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired

from graphnetz import stats
from graphnetz.report import BenchmarkReport

FAST = {"n_posterior_samples": 4000, "n_task_resamples": 300}


def _report(margin=0.01, **settings):
    return BenchmarkReport.from_records(
        make_records(), equivalence_margin=margin, **FAST, **settings
    )


def test_tost_is_holm_adjusted_within_each_task_like_statsmodels():
    eq = _report().analysis().equivalence
    for (task, _, _), models in VALUES.items():
        rows = eq[eq["task"] == task]
        raw = [
            ttost_paired(np.array(models[a]), np.array(models[b]), -0.01, 0.01)[0]
            for a, b in zip(rows["model_a"], rows["model_b"], strict=True)
        ]
        np.testing.assert_allclose(rows["tost_p"], raw, rtol=1e-10)
        np.testing.assert_allclose(rows["tost_p_holm"], multipletests(raw, method="holm")[1])


def test_verdict_combines_the_difference_test_with_tost():
    report = _report(margin=0.05)
    eq, pw = report.analysis().equivalence, report.pairwise()
    for e, p in zip(eq.to_dict("records"), pw.to_dict("records"), strict=True):
        assert e["diff_p_holm"] == p["t_p_holm"]
        assert e["verdict"] == stats.equivalence_verdict(p["t_p_holm"], e["tost_p_holm"], 0.05)
    # cora gcn − gat: Δ = 0.0082, significant (t, Holm) and well inside m = 0.05
    cora = eq[(eq["task"] == "cora/node_cls") & (eq["model_b"] == "gat")].iloc[0]
    assert cora["verdict"] == "different but trivial"


def test_the_wilcoxon_method_drives_the_verdict_when_chosen():
    report = _report(pairwise_method="wilcoxon")
    eq, pw = report.analysis().equivalence, report.pairwise()
    np.testing.assert_allclose(eq["diff_p_holm"], pw["w_p_holm"])


def test_bayesian_probabilities_follow_the_metrics_direction():
    eq = _report().analysis().equivalence
    zinc = eq[(eq["task"] == "zinc/graph_reg") & (eq["model_a"] == "gcn")]
    gat = zinc[zinc["model_b"] == "gat"].iloc[0]  # gat's MAE is 0.044 lower on every seed
    assert gat["p_b_better"] > 0.95
    cells = VALUES[("zinc/graph_reg", "mae", "min")]
    direct = stats.bayesian_signed_rank(
        cells["gcn"], cells["gat"], 0.01, higher_is_better=False, n_samples=4000, seed=0
    )
    assert (gat["p_a_better"], gat["p_rope"], gat["p_b_better"]) == (
        direct.p_a_better,
        direct.p_rope,
        direct.p_b_better,
    )


def test_across_tasks_uses_per_task_means_signed_by_direction():
    across = _report().analysis().bayes_across
    row = across[(across["model_a"] == "gcn") & (across["model_b"] == "gat")].iloc[0]
    means = {(t, m): np.mean(v) for (t, _, _), ms in VALUES.items() for m, v in ms.items()}
    a = [means[("cora/node_cls", "gcn")], -means[("zinc/graph_reg", "gcn")]]
    b = [means[("cora/node_cls", "gat")], -means[("zinc/graph_reg", "gat")]]
    direct = stats.bayesian_signed_rank(a, b, 0.01, n_samples=4000, seed=0)
    assert row["n_tasks"] == 2 and row["p_b_better"] == direct.p_b_better


def test_same_seed_same_probabilities_and_another_seed_changes_them():
    first = _report().analysis().equivalence
    again = _report().analysis().equivalence
    other = _report(bootstrap_seed=5).analysis().equivalence
    assert first[["p_a_better", "p_rope"]].equals(again[["p_a_better", "p_rope"]])
    assert not first["p_rope"].equals(other["p_rope"])


def test_no_margin_no_section():
    report = BenchmarkReport.from_records(make_records(), **FAST)
    assert report.analysis().equivalence.empty
    assert "Equivalence and Bayesian" not in report.to_markdown()


@pytest.mark.parametrize("bad", [0, -0.01, float("nan")])
def test_a_margin_that_is_not_positive_is_refused(bad):
    with pytest.raises(ValueError, match="margin"):
        BenchmarkReport.from_records(make_records(), equivalence_margin=bad)


def test_markdown_latex_json_and_csv_carry_the_numbers(tmp_path):
    report = _report()
    report.write(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "## Equivalence and Bayesian comparison" in md and "P(ROPE)" in md
    assert (tmp_path / "tables" / "equivalence.tex").is_file()
    assert (tmp_path / "figures" / "bayes_cora_node_cls.png").is_file()
    assert (tmp_path / "figures" / "bayes_across_tasks.pdf").is_file()
    doc = BenchmarkReport.from_json(tmp_path / "report.json")
    assert doc.equivalence_margin == 0.01
    saved = json.loads((tmp_path / "report.json").read_text())["analysis"]["equivalence"]
    eq = report.analysis().equivalence
    assert [r["verdict"] for r in saved["within_task"]] == list(eq["verdict"])
    csv = (tmp_path / "equivalence.csv").read_text().splitlines()
    assert csv[0].startswith("task,model_a,model_b,n_common,mean_diff,margin,tost_p")
    assert len(csv) == 1 + len(eq)


def test_a_constant_nonzero_difference_is_significant_and_counts_in_holm():
    rows = [
        ("t", m, s, "accuracy", v, "max")
        for s in range(4)
        for m, v in (("a", 0.75 + s / 8), ("b", 0.5 + s / 8), ("c", 0.5 + s / 8 + (s % 2) / 64))
    ]
    data = pd.DataFrame(rows, columns=["task", "model", "seed", "metric", "value", "direction"])
    pw = BenchmarkReport(data).pairwise()
    ab = pw[(pw["model_a"] == "a") & (pw["model_b"] == "b")].iloc[0]
    assert ab["t_p"] == 0.0 and ab["significant"] and "zero variance" in ab["note"]
    # three testable pairs: Holm's m = 3 for the smallest of the other p-values
    assert pw["t_p_holm"].notna().sum() == 3
