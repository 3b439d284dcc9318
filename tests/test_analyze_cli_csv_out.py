"""Where ``analyze.py --from-csv`` writes without ``--out``: a report's own results.csv is
re-analysed in its report folder (not in report/report), any other CSV never replaces a
report, and nothing it read is replaced."""

from __future__ import annotations

import json
from pathlib import Path

from graphnetz.cli.analyze import main

ACC = {"gcn": [0.81, 0.79, 0.83, 0.80], "mlp": [0.61, 0.64, 0.60, 0.66]}


def write_sweep(root: Path) -> Path:
    for model, values in ACC.items():
        for seed, acc in enumerate(values):
            run = root / f"{model}_{seed}"
            run.mkdir(parents=True)
            record = {
                "schema_version": 1,
                "status": "ok",
                "task": "cora/node_cls",
                "model": model,
                "seed": seed,
                "primary_metric": "accuracy",
                "direction": "max",
                "metrics": {"test": {"accuracy": acc}},
            }
            (run / "result.json").write_text(json.dumps(record))
    return root


def analysed_sweep(tmp_path: Path, capsys) -> Path:
    sweep = write_sweep(tmp_path / "sweep")
    assert main([str(sweep)]) == 0
    capsys.readouterr()
    return sweep / "report"


def test_a_reports_results_csv_is_reanalysed_in_its_own_folder(tmp_path, capsys):
    report = analysed_sweep(tmp_path, capsys)
    csv = report / "results.csv"
    before = csv.read_bytes()
    (report / "report.md").unlink()
    assert main(["--from-csv", str(csv), "--ci", "bootstrap"]) == 0
    assert str(report / "report.md") in capsys.readouterr().out
    assert (report / "report.md").is_file()
    assert "bootstrap" in json.loads((report / "report.json").read_text())["settings"]["ci"]
    assert not (report / "report").exists()
    assert csv.read_bytes() == before  # the same rows, written back as they were


def test_a_results_csv_the_report_would_change_is_kept_and_a_sibling_written(tmp_path, capsys):
    report = analysed_sweep(tmp_path, capsys)
    csv = report / "results.csv"
    # a hand-added run whose accuracy is not a number: read as failed, so not written back
    edited = csv.read_text() + "cora/node_cls,gcn,9,accuracy,nan,max\n"
    csv.write_text(edited)
    assert main(["--from-csv", str(csv)]) == 0
    assert "report-from-csv" in capsys.readouterr().err
    assert csv.read_text() == edited
    assert (tmp_path / "sweep" / "report-from-csv" / "report.md").is_file()
    assert not (report / "report").exists()


def test_another_csv_in_a_report_folder_leaves_that_report_alone(tmp_path, capsys):
    report = analysed_sweep(tmp_path, capsys)
    kept = {p: p.read_bytes() for p in report.rglob("*") if p.is_file()}
    mine = report / "mine.csv"
    mine.write_text(
        "task,model,seed,metric,value\n"
        + "".join(f"karate/node_cls,gat,{s},accuracy,0.{5 + s}\n" for s in range(3))
    )
    assert main(["--from-csv", str(mine)]) == 0
    assert "report-from-csv" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in report.rglob("*") if p.is_file() and p != mine} == kept
    assert "karate/node_cls" in (tmp_path / "sweep" / "report-from-csv" / "results.csv").read_text()
    assert not (report / "report").exists()


def test_a_csv_outside_a_report_folder_gets_a_report_folder_beside_it(tmp_path, capsys):
    csv = tmp_path / "results.csv"
    csv.write_text(
        "task,model,seed,metric,value\n"
        + "".join(f"cora/node_cls,gcn,{s},accuracy,0.{7 + s}\n" for s in range(3))
    )
    assert main(["--from-csv", str(csv)]) == 0
    assert (tmp_path / "report" / "report.md").is_file()
    assert csv.read_text().startswith("task,model,seed,metric,value\n")
