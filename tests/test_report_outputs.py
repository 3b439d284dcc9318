"""Files written by the report: LaTeX cells, Markdown sections, figures."""

import math

import numpy as np
import pandas as pd
from report_fixtures import make_records
from scipy import stats

from graphnetz.report import BenchmarkReport
from graphnetz.report.cells import mark_best


def test_latex_marks_best_in_bold_and_ci_overlap_underlined(tmp_path):
    report = BenchmarkReport.from_records(make_records())
    paths = report.to_latex(tmp_path)
    assert sorted(p.name for p in paths) == [
        "pairwise.tex",
        "ranks.tex",
        "robustness.tex",
        "summary.tex",
    ]
    tex = (tmp_path / "summary.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex
    # best cora mean is gcn (0.8112), best zinc MAE is gat (0.405)
    assert r"$\mathbf{0.8112}_{\pm " in tex
    assert r"$\mathbf{0.4050}_{\pm " in tex
    assert r"\underline{" in tex  # gat's CI on cora overlaps gcn's
    assert "cora/node\\_cls" in tex
    pw = (tmp_path / "pairwise.tex").read_text()
    assert "Holm" in pw and "$^{*}$" in pw


def test_ci_overlap_marks_exactly_the_cells_whose_ci_meets_the_best_ones():
    """Closed intervals [low, high]: a cell overlaps the best when low ≤ best high and
    best low ≤ high; an undefined CI (one seed) never overlaps; the best is by direction."""
    rows = [
        # acc, higher is better: best a [0.78, 0.82]
        ("acc", "max", "a", 0.80, 0.78, 0.82),
        ("acc", "max", "b", 0.77, 0.75, 0.79),  # reaches into the best's CI
        ("acc", "max", "c", 0.75, 0.72, 0.78),  # touches its lower end
        ("acc", "max", "d", 0.74, 0.72, 0.7799),  # stops just short
        ("acc", "max", "e", 0.79, math.nan, math.nan),  # one seed: no CI
        ("acc", "max", "f", 0.70, 0.50, 0.90),  # contains the best's CI
        ("acc", "max", "g", 0.65, 0.64, 0.66),
        # mae, lower is better: best y [0.38, 0.42]; z overlaps only the worst's CI
        ("mae", "min", "x", 0.50, 0.45, 0.55),
        ("mae", "min", "y", 0.40, 0.38, 0.42),
        ("mae", "min", "z", 0.44, 0.43, 0.45),
        ("mae", "min", "w", 0.43, 0.415, 0.445),
    ]
    summary = pd.DataFrame(rows, columns=["task", "direction", "model", "mean", "low", "high"])
    marked = mark_best(summary)
    cell = list(zip(marked["task"], marked["model"], strict=True))
    assert {c for c, b in zip(cell, marked["best"], strict=True) if b} == {
        ("acc", "a"),
        ("mae", "y"),
    }
    assert {c for c, o in zip(cell, marked["overlaps_best"], strict=True) if o} == {
        ("acc", "b"),
        ("acc", "c"),
        ("acc", "f"),
        ("mae", "w"),
    }


def test_latex_underlines_the_cells_whose_t_interval_meets_the_best_ones(tmp_path):
    values = {
        "best": [0.80, 0.81, 0.82],
        "near": [0.78, 0.79, 0.80],
        "far": [0.70, 0.71, 0.72],
        "noisy": [0.60, 0.75, 0.90],
    }
    ci = {
        m: stats.t.interval(0.95, len(v) - 1, loc=np.mean(v), scale=stats.sem(v))
        for m, v in values.items()
    }
    lo, hi = ci["best"]
    expected = {m for m, (a, b) in ci.items() if m != "best" and a <= hi and lo <= b}
    assert expected == {"near", "noisy"}
    rows = [(m, s, v) for m, vs in values.items() for s, v in enumerate(vs)]
    frame = pd.DataFrame(rows, columns=["model", "seed", "value"]).assign(
        task="t", metric="accuracy", direction="max"
    )
    frame.to_csv(tmp_path / "r.csv", index=False)
    BenchmarkReport.from_csv(tmp_path / "r.csv").to_latex(tmp_path / "tables")
    tex = (tmp_path / "tables" / "summary.tex").read_text().splitlines()
    underlined = {
        m for m in values for line in tex if line.startswith(f"{m} &") and r"\underline{" in line
    }
    assert underlined == expected


def test_write_produces_every_file(tmp_path):
    report = BenchmarkReport.from_records(make_records())
    md = report.write(tmp_path)
    names = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    for expected in [
        "report.md",
        "report.json",
        "results.csv",
        "summary.csv",
        "tables/summary.tex",
        "tables/pairwise.tex",
        "figures/cd_diagram.png",
        "figures/cd_diagram.pdf",
        "figures/dashboard.png",
        "figures/task_cora_node_cls.png",
        "figures/pairwise_zinc_graph_reg.pdf",
        "figures/seed_advisor.png",
    ]:
        assert expected in names
    assert not [n for n in names if n.endswith(".tmp")]
    text = md.read_text()
    assert "figures/cd_diagram.png" in text
    assert "no model is declared better" in text
