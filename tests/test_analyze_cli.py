"""analyze.py as users run it: a subprocess over a folder of hand-written result.json files."""

import subprocess
import sys
from pathlib import Path

from report_fixtures import make_csv, write_run_dirs

from graphnetz.cli.analyze import main

ROOT = Path(__file__).resolve().parents[1]


def _run(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, str(ROOT / "analyze.py"), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_analyze_writes_every_output(tmp_path):
    sweep = write_run_dirs(tmp_path / "sweep")
    (sweep / "broken").mkdir()
    (sweep / "broken" / "result.json").write_text('{"status": "ok", "task"')
    res = _run(sweep)
    assert res.returncode == 0, res.stderr
    out = sweep / "report"
    for name in [
        "report.md",
        "report.json",
        "results.csv",
        "summary.csv",
        "tables/summary.tex",
        "tables/pairwise.tex",
        "tables/ranks.tex",
        "figures/cd_diagram.png",
        "figures/cd_diagram.pdf",
        "figures/dashboard.png",
        "figures/task_cora_node_cls.png",
        "figures/pairwise_cora_node_cls.png",
        "figures/seed_advisor.png",
    ]:
        assert (out / name).is_file(), name
    assert str(out / "report.md") in res.stdout
    assert "gcn" in res.stdout  # the summary table is printed
    md = (out / "report.md").read_text()
    assert "broken/result.json" in md  # unreadable run listed
    header = (out / "results.csv").read_text().splitlines()[0]
    assert header.startswith("task,model,seed,metric,value")


def test_analyze_from_csv_with_options(tmp_path):
    csv = make_csv(tmp_path / "results.csv")
    out = tmp_path / "out"
    code = main(
        [
            "--from-csv",
            str(csv),
            "--out",
            str(out),
            "--ci",
            "bootstrap",
            "--pairwise",
            "wilcoxon",
            "--alpha",
            "0.1",
            "--bootstrap-seed",
            "5",
        ]
    )
    assert code == 0
    assert "Wilcoxon signed-rank" in (out / "report.md").read_text()


def test_invalid_choice_names_value_and_choices(tmp_path):
    res = _run(tmp_path, "--ci", "boot")
    assert res.returncode == 2
    assert "'boot'" in res.stderr and "'bootstrap'" in res.stderr


def test_invalid_alpha_names_value(tmp_path):
    res = _run(tmp_path, "--alpha", "1.5")
    assert res.returncode == 2 and "1.5" in res.stderr


def test_unknown_metric_lists_available(tmp_path, capsys):
    sweep = write_run_dirs(tmp_path / "sweep")
    assert main([str(sweep), "--metric", "f1"]) == 2
    assert "available" in capsys.readouterr().err


def test_empty_folder_is_a_clear_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "no usable results" in capsys.readouterr().err
