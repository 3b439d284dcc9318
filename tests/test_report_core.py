"""BenchmarkReport from records, run dirs, CSV and JSON; summary, pairwise, ranking."""

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from report_fixtures import VALUES, make_csv, make_records, write_run_dirs
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from graphnetz.report import BenchmarkReport, infer_direction


def ok_record(model: str, seed: int, accuracy: float, **extra) -> dict:
    """A finished run of task ``t/node_cls`` with its test accuracy."""
    return {
        "status": "ok",
        "task": "t/node_cls",
        "model": model,
        "seed": seed,
        "primary_metric": "accuracy",
        "direction": "max",
        "metrics": {"test": {"accuracy": accuracy}},
        **extra,
    }


def test_summary_matches_hand_computed_t_interval():
    report = BenchmarkReport.from_records(make_records())
    s = report.summary().set_index(["task", "model"])
    x = np.array(VALUES[("cora/node_cls", "accuracy", "max")]["gcn"])
    low, high = stats.t.interval(0.95, 4, loc=x.mean(), scale=stats.sem(x))
    row = s.loc[("cora/node_cls", "gcn")]
    assert row["n"] == 5
    assert row["mean"] == pytest.approx(x.mean())
    assert (row["low"], row["high"]) == pytest.approx((low, high))


def test_records_and_equivalent_csv_give_identical_summaries(tmp_path):
    a = BenchmarkReport.from_records(make_records()).summary()
    b = BenchmarkReport.from_csv(make_csv(tmp_path / "r.csv")).summary()
    pd.testing.assert_frame_equal(a, b)


def test_csv_direction_inferred_from_metric_name():
    assert infer_direction("mae") == "min"
    assert infer_direction("val:loss") == "min"
    assert infer_direction("test_rmse") == "min"
    assert infer_direction("accuracy") == "max"
    assert infer_direction("roc_auc") == "max"


def test_explicit_csv_direction_is_used(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("task,model,seed,metric,value,direction\nt,a,0,score,1.0,min\n")
    report = BenchmarkReport.from_csv(path)
    assert report.direction("t") == "min"


def test_csv_missing_column_names_it(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("task,model,metric,value\nt,a,acc,1.0\n")
    with pytest.raises(ValueError, match="seed"):
        BenchmarkReport.from_csv(path)


def test_an_empty_csv_is_refused_naming_its_path(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(ValueError, match=r"empty\.csv: the file is empty; required columns"):
        BenchmarkReport.from_csv(path)


def test_a_csv_primary_metric_is_the_first_listed_even_when_its_value_is_nan(tmp_path):
    path = tmp_path / "r.csv"
    rows = ["task,model,seed,metric,value", "t,A,0,accuracy,nan", "t,A,0,loss,0.5"]
    rows += [
        f"t,{m},{s},{k},{v}"
        for m in "AB"
        for s in (1, 2)
        for k, v in (("accuracy", 0.8), ("loss", 0.4))
    ]
    path.write_text("\n".join(rows) + "\n")
    report = BenchmarkReport.from_csv(path)
    assert report.primary_metrics == {"t": "accuracy"}
    assert [(f["model"], f["seed"]) for f in report.failed] == [("A", 0)]
    assert len(report.selected()) == 4


def test_a_nan_in_another_metric_leaves_that_value_out_not_the_run(tmp_path):
    path = tmp_path / "r.csv"
    rows = ["task,model,seed,metric,value", "t,A,0,accuracy,0.8", "t,A,0,val:loss,nan"]
    rows += [f"t,{m},{s},accuracy,0.7" for m in "AB" for s in (1, 2)]
    path.write_text("\n".join(rows) + "\n")
    with pytest.warns(UserWarning, match=r"line 3: val:loss of t A seed=0 is not a finite"):
        report = BenchmarkReport.from_csv(path)
    assert report.failed == [] and len(report.selected()) == 5


def test_a_csv_value_that_is_not_a_number_names_its_line(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("task,model,seed,metric,value\nt,A,0,accuracy,0.8\nt,A,1,accuracy,abc\n")
    with pytest.raises(ValueError, match=r"line 3: value 'abc' is not a number"):
        BenchmarkReport.from_csv(path)


def test_means_equal_but_for_float_rounding_tie_in_ranks_and_in_the_best_cell(tmp_path):
    """(0.8 + 0.9) / 2 is 0.8500000000000001 in floats, 0.85 + 0.85 halves to 0.85: the
    same mean, so the two models tie (average ranks) and are both the best cell."""
    path = tmp_path / "r.csv"
    values = {("t1", "A"): (0.8, 0.9), ("t1", "B"): (0.85, 0.85)}
    values |= {("t2", "A"): (0.5, 0.5), ("t2", "B"): (0.5, 0.5)}
    rows = ["task,model,seed,metric,value"]
    rows += [f"{t},{m},{s},accuracy,{v}" for (t, m), vs in values.items() for s, v in enumerate(vs)]
    path.write_text("\n".join(rows) + "\n")
    report = BenchmarkReport.from_csv(path)
    ranks = report.friedman()
    assert ranks.rank_table.to_numpy().tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert ranks.mean_ranks.tolist() == [1.5, 1.5]
    from graphnetz.report.cells import mark_best

    assert mark_best(report.summary())["best"].all()


def test_json_round_trip(tmp_path):
    report = BenchmarkReport.from_records(
        make_records(), ci="bootstrap", pairwise_method="wilcoxon"
    )
    path = report.to_json(tmp_path / "report.json", include_analysis=True)
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == 1
    back = BenchmarkReport.from_json(path)
    assert back.settings() == report.settings()
    pd.testing.assert_frame_equal(back.data, report.data)
    pd.testing.assert_frame_equal(back.summary(), report.summary())
    pd.testing.assert_frame_equal(back.pairwise(), report.pairwise())
    assert back.provenance["versions"] == {"torch": ["2.13.0"]}


def test_json_with_unknown_schema_version_is_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema_version": 99, "results": []}))
    with pytest.raises(ValueError, match="99"):
        BenchmarkReport.from_json(path)


def test_truncated_and_garbage_result_files_are_listed_not_fatal(tmp_path):
    write_run_dirs(tmp_path)
    text = json.dumps(make_records()[0])
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "result.json").write_text(text[: len(text) // 2])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "result.json").write_text("")
    (tmp_path / "list").mkdir()
    (tmp_path / "list" / "result.json").write_text("[1, 2]")
    report = BenchmarkReport.from_run_dirs([tmp_path])
    paths = sorted(u["path"] for u in report.unreadable)
    assert len(paths) == 3 and all(p.endswith("result.json") for p in paths)
    assert len(report.selected()) == 30


def test_skipped_and_failed_runs_are_listed_with_reasons():
    recs = make_records()
    recs.append(
        {
            "schema_version": 1,
            "status": "skipped",
            "reason": "gin is graph-level only",
            "task": "cora/node_cls",
            "model": "gin",
            "seed": 0,
        }
    )
    recs.append(
        {
            "schema_version": 1,
            "status": "failed",
            "error": "Traceback...\nCUDA OOM",
            "task": "cora/node_cls",
            "model": "gt",
            "seed": 0,
        }
    )
    report = BenchmarkReport.from_records(recs)
    assert report.skipped[0]["reason"] == "gin is graph-level only"
    assert "CUDA OOM" in report.failed[0]["error"]
    md = report.to_markdown()
    assert "gin is graph-level only" in md and "CUDA OOM" in md


def test_pairwise_holm_within_task_matches_statsmodels():
    report = BenchmarkReport.from_records(make_records())
    pw = report.pairwise()
    cora = pw[pw["task"] == "cora/node_cls"]
    vals = VALUES[("cora/node_cls", "accuracy", "max")]
    raw = [
        stats.ttest_rel(vals[a], vals[b]).pvalue
        for a, b in zip(cora.model_a, cora.model_b, strict=True)
    ]
    np.testing.assert_allclose(cora["t_p_holm"], multipletests(raw, method="holm")[1])
    assert len(pw) == 6  # 3 pairs per task, 2 tasks


def test_pairwise_direction_decides_who_is_better():
    pw = BenchmarkReport.from_records(make_records()).pairwise(method="t")
    zinc = pw[
        (pw["task"] == "zinc/graph_reg") & (pw["model_a"] == "gcn") & (pw["model_b"] == "gat")
    ]
    # gat has the lower MAE on every seed -> gat is better despite a negative difference sign
    assert zinc["better"].item() == "gat"


def test_switching_pairwise_method_switches_significance():
    report = BenchmarkReport.from_records(make_records())
    t_sig = report.pairwise(method="t")["significant"]
    report.pairwise_method = "wilcoxon"
    w = report.pairwise()
    assert t_sig.any()
    # 5 seeds, 3 pairs: the exact Wilcoxon p is at least 2/32 * 3 > 0.05
    assert not w["significant"].any()
    assert (w["method"] == "wilcoxon").all()


def test_pair_without_common_seed_is_untestable_not_dropped():
    recs = [r for r in make_records() if r["task"] == "cora/node_cls"]
    for r in recs:
        if r["model"] == "sage":
            r["seed"] += 100  # no seed shared with the others
    pw = BenchmarkReport.from_records(recs).pairwise()
    untestable = pw[pw["note"].str.contains("no common seed")]
    assert len(untestable) == 2
    assert untestable["t_p_holm"].isna().all() and not untestable["significant"].any()
    # the single testable pair is not penalised by the untestable ones (m = 1)
    ok = pw[pw["n_common"] == 5].iloc[0]
    assert ok["t_p_holm"] == pytest.approx(ok["t_p"])


def test_one_seed_gives_undefined_ci_shown_as_na():
    recs = [r for r in make_records() if r["seed"] == 0]
    report = BenchmarkReport.from_records(recs)
    s = report.summary()
    assert s["half_width"].isna().all() and (s["n"] == 1).all()
    assert "n/a" in report.to_markdown()


def test_friedman_on_cell_means_with_direction_and_rank_table():
    cd = BenchmarkReport.from_records(make_records()).critical_difference()
    # cora: gcn 1, gat 2, sage 3; zinc (MAE): gat 1, gcn 2, sage 3 -> mean ranks 1.5, 1.5, 3
    assert cd.mean_ranks.to_dict() == {"gcn": 1.5, "gat": 1.5, "sage": 3.0}
    assert cd.ranks.friedman.statistic == pytest.approx(3.0)  # 12*2/12*(2.25+2.25+9-8)
    assert "no model is declared better" in cd.ranks.conclusion


def test_single_task_has_no_friedman_and_says_so():
    recs = [r for r in make_records() if r["task"] == "cora/node_cls"]
    report = BenchmarkReport.from_records(recs)
    cd = report.critical_difference()
    assert not cd.applicable and "2 tasks" in cd.ranks.reason
    assert "not applicable" in report.to_markdown()


def test_model_missing_on_a_task_is_dropped_with_a_warning():
    recs = [
        r for r in make_records() if not (r["model"] == "sage" and r["task"] == "zinc/graph_reg")
    ]
    report = BenchmarkReport.from_records(recs)
    with pytest.warns(UserWarning, match="sage"):
        cd = report.critical_difference()
    assert cd.ranks.dropped_models == ["sage"] and cd.ranks.models == ["gcn", "gat"]


def test_invalid_settings_name_value_and_choices():
    report = BenchmarkReport.from_records(make_records())
    with pytest.raises(ValueError, match=r"'boot'.*\['t', 'bootstrap'\]"):
        report.ci = "boot"
    with pytest.raises(ValueError, match=r"'anova'.*\['t', 'wilcoxon'\]"):
        report.pairwise(method="anova")
    with pytest.raises(ValueError, match="'f1'.*available"):
        report.metric = "f1"


def test_metric_selects_another_split():
    report = BenchmarkReport.from_records(make_records(), metric="val:accuracy")
    assert report.tasks == ["cora/node_cls"]
    assert report.excluded_tasks() == ["zinc/graph_reg"]
    gcn = report.summary().set_index("model").loc["gcn", "mean"]
    assert gcn == pytest.approx(np.mean(VALUES[("cora/node_cls", "accuracy", "max")]["gcn"]) + 0.01)


def test_bootstrap_summary_is_reproducible_and_seed_dependent():
    a = BenchmarkReport.from_records(make_records(), ci="bootstrap", bootstrap_seed=3).summary()
    b = BenchmarkReport.from_records(make_records(), ci="bootstrap", bootstrap_seed=3).summary()
    c = BenchmarkReport.from_records(make_records(), ci="bootstrap", bootstrap_seed=4).summary()
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["low"], c["low"])


def test_power_advisor_columns():
    pwr = BenchmarkReport.from_records(make_records()).power(delta=0.01)
    assert set(pwr["delta"]) == {0.01}
    assert (pwr["seeds_needed"] >= 2).all() and not math.isnan(pwr["mdd"].iloc[0])


# One task, seeds 0..5; c has no seed 5, so its pairs have 5 common seeds. c comes first,
# so its pairs' Δμ = c − a and c − b are negative.
PILOT = {
    "c": [0.807, 0.817, 0.756, 0.796, 0.768],
    "a": [0.804, 0.815, 0.782, 0.817, 0.800, 0.792],
    "b": [0.802, 0.814, 0.777, 0.807, 0.791, 0.783],
}


def _statsmodels_seeds_needed(effect, power, alpha):
    """Smallest S ≥ 2 at which statsmodels' two-sided one-sample t power reaches ``power``."""
    for n in itertools.count(2):
        p = TTestPower().power(effect_size=effect, nobs=n, alpha=alpha, alternative="two-sided")
        assert np.isfinite(p)
        if p >= power:
            return n


@pytest.mark.parametrize(("alpha", "power", "delta"), [(0.05, 0.8, None), (0.1, 0.9, 0.008)])
def test_power_advisor_matches_statsmodels_ttestpower(alpha, power, delta):
    """Every pair's advisor row from the raw per-seed values: σ_d = sample std (ddof 1) of
    the paired differences on the common seeds, S = their number, δ = |Δμ| when none is
    given; mdd solves power(δ/σ_d, S) = target and seeds_needed is the smallest S reaching
    it, both with statsmodels' TTestPower (paired t = one-sample t on the differences)."""
    records = [
        ok_record(model, seed, v)
        for model, values in PILOT.items()
        for seed, v in enumerate(values)
    ]
    report = BenchmarkReport.from_records(records, alpha=alpha)
    rows = report.power(delta=delta, power=power).set_index(["model_a", "model_b"])
    assert sorted(rows.index) == [("a", "b"), ("c", "a"), ("c", "b")]
    for (a, b), row in rows.iterrows():
        s = min(len(PILOT[a]), len(PILOT[b]))
        d = np.array(PILOT[a][:s]) - np.array(PILOT[b][:s])
        sd = d.std(ddof=1)
        target = abs(d.mean()) if delta is None else delta
        mdd = TTestPower().solve_power(effect_size=None, nobs=s, alpha=alpha, power=power) * sd
        assert row["n_common"] == s
        assert row["diff_std"] == pytest.approx(sd)
        assert row["delta"] == pytest.approx(target)
        assert row["mdd"] == pytest.approx(mdd, rel=1e-5)
        assert row["seeds_needed"] == _statsmodels_seeds_needed(target / sd, power, alpha)
        assert row["power"] == power


def test_a_negligible_gap_reads_as_more_than_the_seed_cap_not_a_crash(tmp_path):
    """Two models 1e-6 apart with noisy differences: the advisor says '> 100000' and
    the whole report (markdown, json) is still written."""
    base = np.array([0.20, 0.25, 0.22])
    records = []
    for model, shift in (("a", 0.0), ("b", 1e-6)):
        for seed, v in enumerate(base + shift + np.array([0.0, 0.03, -0.03]) * (model == "b")):
            records.append(ok_record(model, seed, float(v), dataset="t"))
    report = BenchmarkReport.from_records(records)
    assert np.isinf(report.power()["seeds_needed"]).all()
    report.write(tmp_path / "out")
    assert "> 100000" in (tmp_path / "out" / "report.md").read_text()


def test_cost_table_from_the_records_wall_time_and_epochs(tmp_path):
    records = make_records()
    for r in records:
        r["wall_time_s"] = 2.0 + r["seed"]
        r["epochs_run"] = 10 * (r["seed"] + 1)
    report = BenchmarkReport.from_records(records)
    cost = report.cost().set_index(["task", "model"])
    n_seeds = len(VALUES[("cora/node_cls", "accuracy", "max")]["gcn"])
    row = cost.loc[("cora/node_cls", "gcn")]
    seeds = np.arange(n_seeds)
    assert row["n"] == n_seeds and row["wall_s"] == pytest.approx(np.mean(2.0 + seeds))
    assert row["epochs"] == pytest.approx(np.mean(10 * (seeds + 1)))
    assert row["s_per_epoch"] == pytest.approx(np.mean((2.0 + seeds) / (10 * (seeds + 1))))
    assert row["total_s"] == pytest.approx(np.sum(2.0 + seeds))
    # cost rows never enter the analysed metric, and survive the results.csv round trip
    assert not report.selected()["metric"].str.startswith("cost:").any()
    report.write(tmp_path / "out")
    assert "## Cost" in (tmp_path / "out" / "report.md").read_text()
    again = BenchmarkReport.from_csv(tmp_path / "out" / "results.csv")
    pd.testing.assert_frame_equal(again.cost(), report.cost())


def test_run_dirs_are_read_in_job_number_order(tmp_path):
    """Job 10 comes after job 2, so models keep the order the sweep listed them in."""
    import json

    from graphnetz.report import BenchmarkReport

    for job, model in [(2, "b_second"), (10, "a_third"), (1, "c_first")]:
        run = tmp_path / f"{job}_task_{model}_s0"
        run.mkdir()
        for seed in (0, 1):
            (run / f"s{seed}").mkdir()
            (run / f"s{seed}" / "result.json").write_text(
                json.dumps(ok_record(model, seed, 0.5 + 0.1 * seed))
            )
    summary = BenchmarkReport.from_run_dirs([tmp_path]).summary()
    assert list(summary["model"]) == ["c_first", "b_second", "a_third"]


def test_report_json_keeps_infinities_and_nemenyis_own_cliques(tmp_path):
    """Every task ranks A > B > C, so Iman-Davenport's F is infinite (not undefined), and
    Nemenyi's groups stay Nemenyi's when another method draws the cliques."""
    rows = ["task,model,seed,metric,value"]
    rows += [
        f"t{t},{m},{s},accuracy,{base + 0.01 * s}"
        for t in range(3)
        for m, base in (("A", 0.9), ("B", 0.8), ("C", 0.7))
        for s in range(3)
    ]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    docs = {}
    for method in ("nemenyi", "wilcoxon-holm"):
        report = BenchmarkReport.from_csv(tmp_path / "r.csv", cliques=method)
        path = report.to_json(tmp_path / f"{method}.json", include_analysis=True)
        docs[method] = json.loads(path.read_text())["analysis"]["across_tasks"]
    assert docs["nemenyi"]["iman_davenport"]["F"] == "inf"
    nemenyi = docs["nemenyi"]["nemenyi"]["cliques"]
    assert nemenyi == docs["nemenyi"]["cliques"]["groups"] == [["A", "B"], ["B", "C"]]
    assert docs["wilcoxon-holm"]["nemenyi"]["cliques"] == nemenyi
    assert docs["wilcoxon-holm"]["cliques"]["groups"] == [["A", "B", "C"]]
