"""The report's ranking: missing-cell rules, cliques from Wilcoxon + Holm, and the
robustness section (rank probabilities, verdict survival, tasks needed)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp

from graphnetz import stats
from graphnetz.report import BenchmarkReport

MODELS = ["gcn", "gat", "sage", "mlp"]
FAST = {"n_task_resamples": 400}


def _long(n_tasks=8, seeds=3, skip=()):
    """Per-task means ordered gcn > gat > sage > mlp, with task-specific noise."""
    rng = np.random.default_rng(0)
    rows = []
    for t in range(n_tasks):
        base = rng.uniform(0.5, 0.9)
        for j, m in enumerate(MODELS):
            if (t, m) in skip:
                continue
            shift = -0.01 * j + rng.normal(0, 0.01)
            for s in range(seeds):
                value = base + shift + rng.normal(0, 0.002)
                rows.append((f"task{t}", m, s, "accuracy", value, "max"))
    return pd.DataFrame(rows, columns=["task", "model", "seed", "metric", "value", "direction"])


def test_drop_models_is_the_default_and_names_the_missing_cells():
    report = BenchmarkReport(_long(skip={(0, "mlp")}), **FAST)
    ranks = report.analysis().ranks
    assert ranks.missing == "drop-models" and ranks.dropped_models == ["mlp"]
    assert ranks.missing_cells == [("task0", "mlp")] and len(ranks.tasks) == 8
    with pytest.warns(UserWarning, match="left out of the rank table"):
        assert "Missing cells (no result): mlp on task0" in report.to_markdown()


def test_drop_tasks_keeps_every_model_on_the_complete_tasks():
    report = BenchmarkReport(_long(skip={(0, "mlp")}), missing="drop-tasks", **FAST)
    ranks = report.analysis().ranks
    assert ranks.models == MODELS and ranks.dropped_tasks == ["task0"]
    assert list(ranks.rank_table.index) == [f"task{t}" for t in range(1, 8)]


def test_fewer_than_two_complete_tasks_refuse_to_rank_with_the_reason():
    skip = {(t, "mlp") for t in range(1, 8)}
    report = BenchmarkReport(_long(skip=skip), missing="drop-tasks", **FAST)
    ranks = report.analysis().ranks
    assert not ranks.applicable and "1 complete task(s)" in ranks.reason
    assert not report.analysis().robustness.applicable
    with pytest.warns(UserWarning, match="no ranking across tasks"):
        report.to_markdown()


def test_an_unknown_missing_rule_names_the_choices():
    with pytest.raises(ValueError, match="drop-models"):
        BenchmarkReport(_long(), missing="impute")


def test_wilcoxon_holm_cliques_come_from_the_per_task_means():
    data = _long()
    report = BenchmarkReport(data, cliques="wilcoxon-holm", **FAST)
    cd = report.analysis().critical_difference
    means = data.groupby(["task", "model"])["value"].mean().unstack("model")
    order = list(cd.mean_ranks.index)
    long = means[order].stack().rename("value").reset_index()
    theirs = sp.posthoc_wilcoxon(long, val_col="value", group_col="model", p_adjust="holm")
    np.testing.assert_allclose(cd.wilcoxon_p.to_numpy(), theirs.loc[order, order].to_numpy())
    sig = cd.wilcoxon_p.to_numpy() <= 0.05
    expected = stats.cliques_from_significance(cd.mean_ranks.to_numpy(), sig)
    assert cd.cliques == [tuple(order[i] for i in c) for c in expected]
    assert cd.clique_method == "wilcoxon-holm"
    nemenyi = BenchmarkReport(data, **FAST).analysis().critical_difference
    expected_nemenyi = stats.cd_cliques(nemenyi.mean_ranks.to_numpy(), nemenyi.cd)
    assert nemenyi.cliques == [tuple(order[i] for i in c) for c in expected_nemenyi]


def test_robustness_pairs_and_tasks_needed():
    report = BenchmarkReport(_long(), **FAST)
    analysis = report.analysis()
    rob, r = analysis.robustness, analysis.critical_difference.mean_ranks
    assert rob.applicable and rob.n_resamples == 400
    np.testing.assert_allclose(rob.rank_probabilities.sum(axis=1), 1.0)
    assert list(rob.rank_probabilities.index) == list(r.index)
    for p in rob.pairs.to_dict("records"):
        gap = abs(r[p["model_a"]] - r[p["model_b"]])
        assert p["gap"] == pytest.approx(gap)
        assert p["tasks_needed"] == stats.tasks_needed(gap, 4)
        assert p["separated"] == (gap >= analysis.critical_difference.cd)
    assert len(rob.pairs) == len(list(itertools.combinations(MODELS, 2)))
    # leaving task0 out: the mean of the other 7 rows of the rank table
    table = analysis.ranks.rank_table
    np.testing.assert_allclose(rob.loo.loc["task0"], table.drop(index="task0").mean()[r.index])


def test_robustness_is_rendered_everywhere(tmp_path):
    report = BenchmarkReport(_long(), **FAST)
    report.write(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert md.index("## Robustness of the ranking") > md.index("critical difference diagram")
    assert "tasks needed" in md
    tex = (tmp_path / "tables" / "robustness.tex").read_text()
    assert r"\label{tab:rank-stability}" in tex
    saved = json.loads((tmp_path / "report.json").read_text())["analysis"]["robustness"]
    assert saved["n_resamples"] == 400 and len(saved["pairs"]) == 6
    probs = pd.read_csv(tmp_path / "rank_probabilities.csv", index_col="model")
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert (tmp_path / "rank_stability.csv").read_text().startswith("model_a,model_b,gap")
