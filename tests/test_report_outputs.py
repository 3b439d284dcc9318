"""Files written by the report: LaTeX cells, Markdown sections, figures."""

from report_fixtures import make_records

from graphnetz.report import BenchmarkReport


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
