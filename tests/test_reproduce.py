"""The reproduction helpers (benchmarks/reproduce_common.py) and the Tables 1–2 numbers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import reproduce_common as rc  # noqa: E402

HEADER = ",".join(rc.PUBLISHED_COLUMNS)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "published.csv"
    path.write_text(text)
    return path


# --- section replacement -------------------------------------------------------------


def test_replace_section_changes_only_its_section(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(
        "intro\n<!-- BEGIN a -->\nold a\n<!-- END a -->\nmiddle\n"
        "<!-- BEGIN b -->\nold b\n<!-- END b -->\ntail\n"
    )
    rc.replace_section(doc, "a", "new a\nsecond line")
    assert doc.read_text() == (
        "intro\n<!-- BEGIN a -->\nnew a\nsecond line\n<!-- END a -->\nmiddle\n"
        "<!-- BEGIN b -->\nold b\n<!-- END b -->\ntail\n"
    )
    rc.replace_section(doc, "a", "again")  # idempotent structure: markers stay single
    assert doc.read_text().count("<!-- BEGIN a -->") == 1
    assert "old b" in doc.read_text()


def test_replace_section_missing_marker_names_it(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- BEGIN a -->\nx\n<!-- END a -->\n")
    with pytest.raises(ValueError, match=r"BEGIN zzz.*sections present: \['a'\]"):
        rc.replace_section(doc, "zzz", "body")
    assert doc.read_text() == "<!-- BEGIN a -->\nx\n<!-- END a -->\n"


# --- verdict rule ------------------------------------------------------------------------


def pub(value, unit=0.001, half_width=None):
    return rc.Published(value, half_width, unit, "test")


def test_verdict_inside_ci_and_rounding():
    # |0.80 - 0.81| = 0.010 <= h 0.0097 + u/2 0.0005 = 0.0102
    assert rc.verdict(pub(0.81), rc.Ours(0.80, 0.0097, 3)) == "inside"
    assert rc.verdict(pub(0.81), rc.Ours(0.80, 0.009, 3)) == "open"
    # exact statistic: only the published rounding counts (0.42 covers [0.415, 0.425])
    assert rc.verdict(pub(0.42, unit=0.01), rc.Ours(0.4249)) == "inside"
    assert rc.verdict(pub(0.42, unit=0.01), rc.Ours(0.426)) == "open"
    # n = 1: no CI, treated like an exact value
    assert rc.verdict(pub(0.5), rc.Ours(0.51, float("nan"), 1)) == "open"


def test_verdict_explained_missing_and_unpublished():
    assert rc.verdict(pub(0.42, unit=0.01), rc.Ours(0.398), "convention") == "explained"
    assert rc.verdict(pub(0.42, unit=0.01), rc.Ours(0.42), "convention") == "inside"
    assert rc.verdict(None, rc.Ours(0.3)) == "no published value"
    assert rc.verdict(pub(0.3), None) == "missing"


def test_ours_from_values_uses_the_t_interval():
    ours = rc.Ours.from_values([1.0, 2.0, 3.0])
    # t_{0.975, 2} = 4.302653, s = 1, sqrt(3)
    assert ours.mean == 2.0 and ours.n == 3
    assert ours.half_width == pytest.approx(4.302653 / 3**0.5, rel=1e-6)
    assert rc.Ours.from_values([5.0, 5.0]).n is None  # identical runs: exact


def test_summary_counts_and_largest_open():
    cells = [
        rc.Cell(("a",), pub(1.0), rc.Ours(1.0)),
        rc.Cell(("b",), pub(1.0), rc.Ours(1.5)),
        rc.Cell(("c",), pub(1.0), rc.Ours(1.1)),
        rc.Cell(("d",), None, rc.Ours(2.0)),
    ]
    text = rc.summary(cells, top=1)
    assert "1 inside CI, 0 explained, 2 open, 1 without" in text
    assert "b: +0.5" in text and "c:" not in text


# --- published-value reader ------------------------------------------------------------


def test_read_published_parses_a_good_file(tmp_path):
    path = write(tmp_path, f"{HEADER}\np,1,humloc,edges,18000,,1000,Table 1\n")
    cell = rc.read_published(path)[("p", "1", "humloc", "edges")]
    assert cell == rc.Published(18000.0, None, 1000.0, "Table 1")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("paper,table,row,column,value\np,1,r,c,1\n", r"missing column\(s\) \['half_width'"),
        (f"{HEADER}\np,1,r,c,abc,,1,src\n", r"line 2: value='abc' is not a number"),
        (f"{HEADER}\np,1,r,c,1,,1,src\np,1,r,c,2,,1,src\n", r"line 3: duplicate cell"),
        (f"{HEADER}\np,1,r,c,1,,1,\n", r"line 2: .* has no source note"),
        (f"{HEADER}\np,1,,c,1,,1,src\n", r"line 2: empty paper/table/row/column"),
    ],
)
def test_read_published_bad_file_names_the_problem(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        rc.read_published(write(tmp_path, text))


def test_read_published_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        rc.read_published(tmp_path / "nope.csv")


def test_shipped_published_values_parse():
    values = rc.read_published()
    assert values[("mlgnc", "1", "humloc", "label_homophily")].value == 0.42


# --- Tables 1-2 script on the mirror -----------------------------------------------------


def test_humloc_as_released_homophily_matches_the_issue(mirror, tmp_path):
    import reproduce_ml_statistics as script

    stats, rows = script.convention_statistics("humloc", str(mirror), str(tmp_path / "data"))
    assert rows.shape[0] == 18496
    assert round(stats["as_released"]["label_homophily"], 3) == 0.420
    assert round(stats["simple"]["label_homophily"], 3) == 0.398


def test_render_cells_rows_and_source_notes():
    cells = [
        rc.Cell(
            ("cora", "GCN"), rc.Published(0.811, 0.001, 0.001, "findings"), rc.Ours(0.805, 0.01, 10)
        ),
        rc.Cell(("cora", "GAT"), None, rc.Ours(0.79)),
        rc.Cell(
            ("mnist", "GCN"), rc.Published(0.105, None, 0.001, "other"), None, missing_note="cmd"
        ),
    ]
    text = rc.render_cells(cells, ("task", "model"))
    lines = text.splitlines()
    assert lines[0] == "| task | model | published | ours | difference | verdict |"
    assert (
        lines[2]
        == "| cora | GCN | 0.811 ± 0.001 [1] | 0.8050 ± 0.0100 (n = 10) | -0.0060 | inside CI |"
    )
    assert lines[3].endswith(f"| {rc.NOT_AVAILABLE} |")
    assert lines[4] == "| mnist | GCN | 0.105 [2] | — | — | missing: cmd |"
    assert "[1] findings" in text and "[2] other" in text


def test_median_mde_bootstrap_interval_is_a_seed_resampling_of_the_median_mde():
    """Written again as a plain loop: resample the shared seeds, recompute every pair's
    MDE with graphnetz.stats, take the median; same generator, same interval."""
    import numpy as np
    import reproduce_pairwise_stats as gp

    from graphnetz.stats import min_detectable_difference

    rng = np.random.default_rng(4)
    models = list(gp.MODELS)
    values = {
        ("cora", m): {s: 0.8 + 0.01 * i + float(rng.normal(0, 0.006)) for s in range(10)}
        for i, m in enumerate(models)
    }
    low, high, n = gp.median_mde_interval(values, "cora", draws=300)
    assert n == 10
    acc = np.array([[values[("cora", m)][s] for m in models] for s in range(10)])
    rows = np.random.default_rng(0).integers(0, 10, size=(300, 10))
    medians = []
    for draw in rows:
        sample = acc[draw]
        medians.append(
            np.median(
                [
                    min_detectable_difference(
                        float(np.std(sample[:, a] - sample[:, b], ddof=1)), 10, 0.8, gp.ALPHA
                    )
                    for a in range(len(models))
                    for b in range(a + 1, len(models))
                ]
            )
        )
    assert (low, high) == pytest.approx(tuple(np.percentile(medians, [2.5, 97.5])), rel=1e-9)
    point = float(np.median(gp.pair_tests(values, "cora")[3]))
    assert low < point < high
    doubled = {k: {s: 2 * v for s, v in seeds.items()} for k, seeds in values.items()}
    assert gp.median_mde_interval(doubled, "cora", draws=300)[:2] == pytest.approx(
        (2 * low, 2 * high)
    )
    assert gp.median_mde_interval({("cora", "gcn"): values[("cora", "gcn")]}, "cora") is None


def test_resolved_count_bootstrap_matches_scipy_and_statsmodels():
    """Each draw's count written again with scipy's paired t and statsmodels' Holm step:
    the same resampled seeds (same generator) give the same counts, and the spread note
    says whether the 95 % interval holds the published count."""
    import numpy as np
    import reproduce_gn_pairwise as gp
    from scipy.stats import ttest_rel
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    models = list(gp.MODELS)
    offsets = {"gcn": 0.0, "gat": 0.004, "sage": 0.009, "gt": 0.02}
    values = {
        ("cora", m): {s: 0.8 + offsets[m] + float(rng.normal(0, 0.006)) for s in range(10)}
        for m in models
    }
    counts = gp.resolved_pairs_draws(values, "cora", draws=200)
    acc = np.array([[values[("cora", m)][s] for m in models] for s in range(10)])
    rows = np.random.default_rng(0).integers(0, 10, size=(200, 10))
    expected = []
    for draw in rows:
        sample = acc[draw]
        p = [
            ttest_rel(sample[:, a], sample[:, b]).pvalue
            for a in range(len(models))
            for b in range(a + 1, len(models))
        ]
        expected.append(int(multipletests(p, alpha=gp.ALPHA, method="holm")[0].sum()))
    assert counts.tolist() == expected
    assert len(set(expected)) > 1  # the count does move with the seeds here
    low, high = sorted(expected)[4], sorted(expected)[194]  # 2.5 % and 97.5 % of 200
    text, holds = gp.resolved_spread_note(values, "cora", low, draws=200)
    assert holds and f"{int(low)}-{int(high)} resolved pairs" in text
    assert gp.resolved_spread_note(values, "cora", 7, draws=200)[1] is False
    assert gp.resolved_pairs_draws({("cora", "gcn"): values[("cora", "gcn")]}, "cora") is None


def test_fewer_resolved_pairs_are_explained_only_by_pairs_below_their_mde():
    """A pair left unresolved explains a shortfall only if it differs by less than its
    minimum detectable effect; one that differs by more leaves the cell open."""
    import numpy as np
    import reproduce_gn_pairwise as gp

    rng = np.random.default_rng(1)
    noise = {m: rng.normal(0, 0.004, 10) for m in gp.MODELS}
    offsets = {"gcn": 0.0, "gat": 0.03, "sage": 0.06, "gt": 0.062}  # sage ~ gt: close
    values = {
        ("cora", m): {s: 0.7 + offsets[m] + float(noise[m][s]) for s in range(10)}
        for m in gp.MODELS
    }
    pairs, t_p, _, mde = gp.pair_tests(values, "cora")
    unresolved = [(p, m) for p, tp, m in zip(pairs, t_p, mde, strict=True) if tp > gp.ALPHA]
    assert [p for p, _ in unresolved] == [("sage", "gt")]
    note = gp.underpowered_pairs({}, ("graphnetz", "2", "cora"), values, "cora", pairs, t_p, mde)
    assert note is not None and "GraphSAGE vs GraphTransformer" in note
    assert f"{unresolved[0][1]:.4f}" in note
    # the same pair pushed apart by more than its MDE but made unresolvable by a noisy
    # spread would be a different question: a diff >= MDE is never called chance
    forced = list(mde)
    forced[pairs.index(("sage", "gt"))] = 0.0001
    assert (
        gp.underpowered_pairs({}, ("graphnetz", "2", "cora"), values, "cora", pairs, t_p, forced)
        is None
    )
    resolved_all = np.zeros(len(pairs))
    assert (
        gp.underpowered_pairs({}, ("g", "2", "cora"), values, "cora", pairs, resolved_all, mde)
        is None
    )


def test_runs_at_the_reference_task_definition_are_kept_apart():
    """Nested overrides (dataset.loader.*) are matched in the resolved config, and Ising
    runs at the reference's lattice never count as runs of our Ising task."""
    import reproduce_gn_cross_category as cc
    import reproduce_gn_pairwise as gp

    def record(loader):
        return {"dataset": "ising", "config": {"dataset": {"loader": loader}, "model": {}}}

    ours = record({"side": 20})
    theirs = record({"side": 20, "lattice": "reference", "spins": "bernoulli"})
    half = record({"side": 20, "lattice": "reference"})
    assert gp.has_settings(theirs, {"dataset.loader.lattice": "reference"})
    assert not gp.has_settings(ours, {"dataset.loader.lattice": "reference"})
    assert not gp.has_settings(ours, {"model.head_channels": 64})
    assert [cc.at_reference_definition(r) for r in (ours, theirs, half)] == [False, True, False]
    command = cc.definition_command("ising", "gat", "DIR")
    assert "+dataset.loader.lattice=reference +dataset.loader.spins=bernoulli" in command
    assert "+model.head_channels=64" in command and "hydra.sweep.dir=DIR" in command


def test_the_reference_package_run_here_explains_a_low_published_draw():
    """Explained only when the package's seeds 0-9 give the published value back and its
    mean over more seeds lies inside our interval at its settings; otherwise the numbers
    go to the open note."""
    published = rc.Published(0.524, 0.019, 0.001, "findings.md")
    ours_there = dict(enumerate([0.53, 0.55, 0.57, 0.59, 0.56, 0.55, 0.58, 0.54, 0.57, 0.56]))
    low_first = [0.50, 0.52, 0.53, 0.51, 0.54, 0.53, 0.52, 0.54, 0.53, 0.52]  # mean 0.524
    run = {"values": low_first + [0.57] * 30, "nodes": 1174, "edges": 1417}

    def cell():
        return rc.Cell(("euroroad/link_pred", "GCN"), published, rc.Ours(0.63, 0.02, 10))

    explained = cell()
    rc.reference_package_note(explained, run, ours_there)
    assert explained.verdict == "explained"
    assert "0.5240 at its seeds 0-9 (the published value)" in explained.explanation

    other_graph = cell()  # its seeds 0-9 are not the published cell, yet it agrees with ours
    rc.reference_package_note(other_graph, {**run, "values": [0.57] * 40}, ours_there)
    assert other_graph.verdict == "explained"
    assert other_graph.explanation.startswith("the published cell is another computation")
    assert "0.5700 at its seeds 0-9 and" in other_graph.explanation

    far = cell()  # the published draw, but its mean stays below ours: a real difference
    rc.reference_package_note(far, {**run, "values": low_first * 4}, ours_there)
    assert far.verdict == "open" and "(the published value)" in far.open_note

    untouched = cell()
    rc.reference_package_note(untouched, None, ours_there)
    rc.reference_package_note(untouched, run, None)
    assert untouched.open_note == "" and untouched.explanation is None


# --- synthetic Tables 4 / 10 / 11 -----------------------------------------------------


def test_synthetic_columns_are_the_experiments_sweep_levels(make_cfg):
    import reproduce_ml_synthetic as rs

    for experiment, key, columns in (
        ("ml_synthetic_features", "feature_quality", rs.QUALITY),
        ("ml_synthetic_homophily", "alpha", rs.HOMOPHILY),
    ):
        for task in columns:  # each column is the report task one swept level produces
            value = task.split("_r")[-1] if key == "feature_quality" else task.split("_a")[1]
            value = value.split("_b")[0]
            cfg = make_cfg(f"experiment={experiment}", f"dataset.loader.{key}={value}")
            assert cfg.dataset.name == task


def test_synthetic_cost_counts_the_runs_left_and_estimates_from_measured_ones():
    import reproduce_ml_synthetic as rs

    first = next(iter(rs.QUALITY))
    records = [
        {"dataset": first, "model": model, "wall_time_s": 60.0}
        for model in rs.METHODS
        for _ in range(2)
    ]
    lines = rs.estimate("ml_synthetic_features", records, rs.QUALITY)
    total = len(rs.QUALITY) * len(rs.METHODS) * rs.SEEDS
    left = total - len(records)
    assert (
        f"* measured so far: {len(records)} runs, {len(records) * 60 / 3600:.1f} core-hours."
        in lines
    )
    assert any(
        line.startswith(f"* {left} runs left") and f"≈ {left * 60 / 3600:.1f}" in line
        for line in lines
    )
    one_missing = [r for r in records if r["model"] != "lanc"]
    lines = rs.estimate("ml_synthetic_features", one_missing, rs.QUALITY)
    assert any("not estimable until every method has one measured run" in line for line in lines)
    assert rs.estimate("ml_synthetic_features", [], rs.QUALITY) == [
        "* `ml_synthetic_features`: no run measured yet."
    ]
