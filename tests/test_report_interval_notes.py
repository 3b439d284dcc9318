"""A CI that reaches past its metric's range, or has zero width, is kept as defined (the
Student-t interval) and marked, with one note per report saying what it means."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from graphnetz.report import BenchmarkReport
from graphnetz.report.cells import metric_range
from graphnetz.report.latex import summary_table

WIDE = [0.60, 0.95, 1.00]  # t-interval [0.309, 1.391]: past 1
SAME = [0.7895, 0.7895, 0.7895]  # all seeds alike: zero width
PLAIN = [0.70, 0.72, 0.71]


def report(tmp_path: Path, cells: dict[str, list[float]], metric: str = "accuracy"):
    lines = ["task,model,seed,metric,value"]
    for model, values in cells.items():
        lines += [f"cora/node_cls,{model},{s},{metric},{v}" for s, v in enumerate(values)]
    path = tmp_path / "r.csv"
    path.write_text("\n".join(lines) + "\n")
    return BenchmarkReport.from_csv(path)


def summary_row(markdown: str, model: str) -> str:
    return next(line for line in markdown.splitlines() if f"| {model} |" in line)


def test_a_ci_past_the_metrics_range_is_marked_and_explained_once(tmp_path):
    rep = report(tmp_path, {"wide": WIDE, "plain": PLAIN, "wide2": [w - 0.01 for w in WIDE]})
    row = rep.summary().set_index("model").loc["wide"]
    low, high = stats.t.interval(0.95, 2, np.mean(WIDE), stats.sem(WIDE))
    assert (row["low"], row["high"]) == pytest.approx((low, high))  # unchanged statistic
    md = rep.to_markdown()
    assert summary_row(md, "wide").endswith(f"[{low:.4f}, {high:.4f}] † |")
    assert "†" not in summary_row(md, "plain")
    notes = [line for line in md.splitlines() if line.startswith("† ")]
    assert len(notes) == 1
    assert "wide on cora/node_cls" in notes[0] and "wide2 on cora/node_cls" in notes[0]
    assert "--ci bootstrap" in notes[0]


def test_a_zero_width_ci_is_marked_and_explained_even_when_best(tmp_path):
    md = report(tmp_path, {"same": SAME, "plain": PLAIN}).to_markdown()
    row = summary_row(md, "same")
    assert "**0.7895 ± 0.0000**" in row and row.endswith("‡ |")
    (note,) = [line for line in md.splitlines() if line.startswith("‡ ")]
    assert "same on cora/node_cls 0.7895" in note and "same value" in note


def test_no_note_when_every_interval_is_inside_the_range(tmp_path):
    md = report(tmp_path, {"plain": PLAIN, "other": [0.5, 0.52, 0.55]}).to_markdown()
    assert "†" not in md and "‡" not in md


def test_an_error_metric_below_zero_is_marked(tmp_path):
    md = report(tmp_path, {"m": [0.01, 0.02, 0.9]}, metric="mae").to_markdown()
    assert summary_row(md, "m").endswith("† |")


def test_the_latex_table_marks_the_cells_and_keys_the_marks(tmp_path):
    tex = summary_table(report(tmp_path, {"wide": WIDE, "same": SAME}).analysis())
    assert r"^{\dagger}$" in tex and r"^{\ddagger}$" in tex
    caption = next(line for line in tex.splitlines() if line.startswith(r"\caption"))
    assert r"$^{\dagger}$:" in caption and r"$^{\ddagger}$:" in caption
    plain = summary_table(report(tmp_path, {"plain": PLAIN, "p2": [0.5, 0.52, 0.55]}).analysis())
    assert "dagger" not in plain


@pytest.mark.parametrize(
    ("metric", "bounds"),
    [
        ("accuracy", (0, 1)),
        ("val:accuracy", (0, 1)),
        ("macro_ap", (0, 1)),
        ("auc", (0, 1)),
        ("hits@10", (0, 1)),
        ("mae", (0, np.inf)),
        ("train:loss", None),  # a loss may be negative
        ("cost:wall_time_s", None),
    ],
)
def test_metric_ranges_are_read_from_the_name(metric, bounds):
    assert metric_range(metric) == bounds
