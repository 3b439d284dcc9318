"""The report folder as a whole: a rerun replaces the earlier report (no stale tables or
figures, other files kept), a failure leaves it as it was, links point at drawn figures,
task names never share a figure file, odd names are drawn and typeset as written, and the
same analysis writes the same bytes."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from graphnetz.report import BenchmarkReport
from graphnetz.report import writer as writer_module
from graphnetz.report.latex import ranks_table, summary_table
from graphnetz.stats import min_detectable_difference


def write_csv(path, rows) -> str:
    frame = pd.DataFrame(rows, columns=["task", "model", "seed", "metric", "value", "direction"])
    frame.to_csv(path, index=False)
    return str(path)


def two_tasks(path, metric2="mae") -> str:
    rows = []
    for seed, (a, b) in enumerate([(0.80, 0.70), (0.82, 0.75), (0.81, 0.72)]):
        rows += [
            ("t1", "gcn", seed, "accuracy", a, "max"),
            ("t1", "gat", seed, "accuracy", b, "max"),
        ]
        rows += [
            ("t2", "gcn", seed, metric2, 1 - a, "min"),
            ("t2", "gat", seed, metric2, 1 - b, "min"),
        ]
    return write_csv(path, rows)


def files(folder) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_a_rerun_removes_what_the_new_report_does_not_write(tmp_path):
    out = tmp_path / "report"
    csv = two_tasks(tmp_path / "r.csv")
    BenchmarkReport.from_csv(csv, equivalence_margin=0.01).write(out)
    before = files(out)
    assert {"tables/equivalence.tex", "equivalence.csv", "figures/bayes_t1.png"} <= before
    (out / "notes.txt").write_text("mine")
    (out / "figures" / "sketch.png").write_bytes(b"mine")
    BenchmarkReport.from_csv(csv).write(out)
    after = files(out)
    assert not {"tables/equivalence.tex", "equivalence.csv", "figures/bayes_t1.png"} & after
    assert {"notes.txt", "figures/sketch.png", "tables/summary.tex", "report.md"} <= after
    assert not [p for p in out.iterdir() if ".writing-" in p.name]


def test_files_named_like_a_reports_are_kept_where_no_report_wrote_them(tmp_path):
    out = tmp_path / "mine"
    (out / "figures").mkdir(parents=True)
    for name in ("pairwise.csv", "unpaired.csv", "figures/task_notes.png"):
        (out / name).write_text("mine")
    rows = [("t", "gcn", s, "acc", 0.8 + 0.01 * s, "max") for s in range(3)]  # one model
    BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows)).write(out)
    assert all((out / n).read_text() == "mine" for n in ("pairwise.csv", "unpaired.csv"))
    assert (out / "figures/task_notes.png").read_text() == "mine"
    BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows)).write(out)  # a rerun too
    assert (out / "unpaired.csv").read_text() == "mine"


def test_a_failed_write_leaves_the_earlier_report_untouched(tmp_path, monkeypatch):
    out = tmp_path / "report"
    csv = two_tasks(tmp_path / "r.csv")
    BenchmarkReport.from_csv(csv).write(out)
    snapshot = {name: (out / name).read_bytes() for name in files(out)}

    def broken(*args, **kwargs):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(writer_module, "render", broken)
    with pytest.raises(RuntimeError, match="disk gone"):
        BenchmarkReport.from_csv(csv, alpha=0.1).write(out)
    assert {name: (out / name).read_bytes() for name in files(out)} == snapshot
    assert not [p for p in out.iterdir() if ".writing-" in p.name]


def test_report_md_links_only_the_figures_that_were_drawn(tmp_path):
    # t1's models share no seed: no posterior of t1 is drawn, so none is linked
    rows = [("t1", "gcn", 0, "acc", 0.8, "max"), ("t1", "gat", 1, "acc", 0.7, "max")]
    rows += [
        ("t2", m, s, "acc", v + 0.01 * s, "max")
        for s in range(3)
        for m, v in [("gcn", 0.8), ("gat", 0.6)]
    ]
    out = tmp_path / "report"
    BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows), equivalence_margin=0.1).write(out)
    links = re.findall(r"\]\((figures/[^)]+)\)", (out / "report.md").read_text())
    assert links and all((out / link).is_file() for link in links)
    assert "figures/bayes_t2.png" in links and "figures/bayes_t1.png" not in links


def test_tasks_with_the_same_file_name_get_their_own_figures(tmp_path):
    rows = []
    for task, shift in [("cora/node_cls", 0.0), ("cora node_cls", -0.3)]:
        rows += [
            (task, m, s, "acc", v + shift + 0.01 * s, "max")
            for s in range(2)
            for m, v in [("a", 0.9), ("b", 0.8)]
        ]
    out = tmp_path / "report"
    BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows)).write(out)
    md = (out / "report.md").read_text()
    assert "figures/task_cora_node_cls.png" in md and "figures/task_cora_node_cls-2.png" in md
    assert (out / "figures/task_cora_node_cls-2.png").is_file()


def test_dollar_signs_and_brackets_in_names_are_written_as_text(tmp_path):
    rows = [
        ("t1", name, s, "acc", v + 0.01 * s, "max")
        for s in range(2)
        for name, v in [("a $\\q$", 0.9), ("[b]", 0.8)]
    ]
    rows += [
        ("t2", name, s, "acc", v + 0.01 * s, "max")
        for s in range(2)
        for name, v in [("a $\\q$", 0.7), ("[b]", 0.6)]
    ]
    out = tmp_path / "report"
    BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows)).write(out)  # no mathtext error
    assert (out / "figures/cd_diagram.png").is_file()
    summary = (out / "tables/summary.tex").read_text()
    assert "\na \\$\\textbackslash{}q\\$ & " in summary
    assert "\n{[}b] & " in summary  # a row starting with [ is not \\'s optional argument


def test_latex_summary_names_each_tasks_metric_and_split(tmp_path):
    report = BenchmarkReport.from_csv(two_tasks(tmp_path / "r.csv"))
    tex = summary_table(report.analysis())
    assert "Model & t1 & t2 \\\\\n & accuracy $\\uparrow$ & mae $\\downarrow$ \\\\" in tex
    assert "Values from the test split." in tex
    report = BenchmarkReport.from_csv(two_tasks(tmp_path / "v.csv", metric2="val:accuracy"))
    assert "test and validation splits" in summary_table(report.analysis())


def test_ranks_table_writes_infinite_f_and_small_p_as_latex(tmp_path):
    # every task ranks the models alike: Iman-Davenport F is infinite, its p 0
    rows = [
        (f"t{t}", m, s, "acc", v + 0.001 * s, "max")
        for t in range(4)
        for s in range(2)
        for m, v in [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    ]
    rows.append(("t0", "d", 0, "acc", 0.5, "max"))
    report = BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows))
    tex = ranks_table(report.analysis())
    caption = tex[tex.index("\\caption") : tex.index("\\label")]
    assert "$F = \\infty$" in caption and "$p = 0$" in caption
    assert not re.search(r"\$[^$]*\de[-+]\d[^$]*\$", caption)  # no 1.2e-05 inside maths
    assert "Not ranked (absent on some task): d." in caption


def test_pdf_figures_are_the_same_bytes_on_a_rerun(tmp_path):
    csv = two_tasks(tmp_path / "r.csv")
    BenchmarkReport.from_csv(csv).write(tmp_path / "a")
    BenchmarkReport.from_csv(csv).write(tmp_path / "b")
    written = files(tmp_path / "a")
    assert written == files(tmp_path / "b")
    pdfs = {n for n in written if n.endswith(".pdf")}
    assert {"figures/cd_diagram.pdf", "figures/dashboard.pdf", "figures/task_t1.pdf"} <= pdfs
    for name in sorted(written):
        if name.endswith((".pdf", ".png", ".tex", ".csv")):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), (
                name
            )


def test_a_metric_with_two_directions_on_one_task_is_refused(tmp_path):
    rows = [("t", "a", 0, "acc", 0.8, "max"), ("t", "b", 0, "acc", 0.7, "min")]
    with pytest.raises(
        ValueError, match=r"line 3: direction 'min' of acc on t differs from 'max' on line 2"
    ):
        BenchmarkReport.from_csv(write_csv(tmp_path / "r.csv", rows))


def test_an_alpha_above_the_power_needs_no_difference_at_all():
    assert min_detectable_difference(0.02, 5, power=0.8, alpha=0.9) == 0.0
    assert min_detectable_difference(0.02, 5, power=0.8, alpha=0.05) > 0
