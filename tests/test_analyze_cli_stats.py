"""analyze.py's statistics options: --equivalence-margin, --cliques, --missing and the
resampling counts; bad values are refused by name."""

from __future__ import annotations

import json

import pytest
from report_fixtures import make_csv

from graphnetz.cli.analyze import main

FAST = ["--rank-resamples", "200", "--posterior-samples", "2000"]


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_margin_and_wilcoxon_cliques_reach_the_report(tmp_path, capsys):
    csv = make_csv(tmp_path / "results.csv")
    out_dir = tmp_path / "r"
    code, out, _ = _run(
        capsys,
        "--from-csv",
        csv,
        "--out",
        out_dir,
        "--equivalence-margin",
        "0.01",
        "--cliques",
        "wilcoxon-holm",
        *FAST,
    )
    assert code == 0
    assert "equivalence (margin 0.01):" in out and "rank stability per pair:" in out
    settings = json.loads((out_dir / "report.json").read_text())["settings"]
    assert settings["equivalence_margin"] == 0.01 and settings["cliques"] == "wilcoxon-holm"
    assert settings["n_task_resamples"] == 200 and settings["n_posterior_samples"] == 2000
    assert "Wilcoxon signed-rank on per-task means, Holm" in (out_dir / "report.md").read_text()


def test_without_a_margin_there_is_no_equivalence(tmp_path, capsys):
    csv = make_csv(tmp_path / "results.csv")
    code, out, _ = _run(capsys, "--from-csv", csv, "--out", tmp_path / "r", *FAST)
    assert code == 0 and "equivalence (margin" not in out
    assert not (tmp_path / "r" / "equivalence.csv").exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--equivalence-margin", "0", "invalid margin '0'"),
        ("--equivalence-margin", "wide", "invalid margin 'wide'"),
        ("--cliques", "bonferroni", "invalid choice: 'bonferroni'"),
        ("--missing", "impute", "invalid choice: 'impute'"),
        ("--rank-resamples", "0", "invalid count '0'"),
    ],
)
def test_bad_values_are_refused_by_name(tmp_path, capsys, option, value, message):
    with pytest.raises(SystemExit) as exit_info:
        main(["--from-csv", str(make_csv(tmp_path / "results.csv")), option, value])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
