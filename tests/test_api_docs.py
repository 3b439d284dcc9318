"""docs/python_api.md's example runs as written; ``python -m graphnetz list`` works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphnetz.cli.list import main as list_main

DOC = Path(__file__).resolve().parents[1] / "docs" / "python_api.md"


def first_python_block(text: str) -> str:
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


def test_the_documented_example_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example writes outputs/ and reads/writes data/ here
    namespace: dict = {"__name__": "docs_example"}
    exec(compile(first_python_block(DOC.read_text()), str(DOC), "exec"), namespace)
    report = namespace["report"]
    summary = report.summary()
    assert list(zip(summary["task"], summary["model"], strict=True)) == [
        ("karate/node_cls", "GCN"),
        ("karate/node_cls", "Mine"),
        ("communities/node_cls", "GCN"),
        ("communities/node_cls", "Mine"),
    ]
    assert set(summary["n"]) == {2}
    assert [r["model"] for r in report.skipped] == ["GIN"] * 4  # 2 tasks x 2 seeds
    assert len(list((tmp_path / "outputs/api_demo").rglob("result.json"))) == 12
    assert (tmp_path / "outputs/api_demo/report/report.md").is_file()
    assert "[12/12]" in capsys.readouterr().out  # one progress line per run


def test_list_datasets_prints_one_row_per_dataset_and_task_type(capsys):
    list_main(["list", "datasets", "--category", "social"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["category", "task_type", "dataset", "epochs", "offline"]
    node_rows = {line.split()[2] for line in lines[1:-1] if line.split()[1] == "node_cls*"}
    assert {"cora", "karate"} <= node_rows
    assert {line.split()[0] for line in lines[1:-1]} == {"social"}


def test_list_tasks_names_each_primary_metric(capsys):
    list_main(["list", "tasks"])
    out = capsys.readouterr().out
    assert re.search(r"graph_reg\s+mae\s+min", out) and re.search(r"link_pred\s+auc\s+max", out)


def test_python_m_graphnetz_list_models():
    done = subprocess.run(
        [sys.executable, "-m", "graphnetz", "list", "models"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    table = done.stdout.splitlines()
    assert table[0].split() == ["name", "kind", "builds", "task_types"]
    names = [line.split()[0] for line in table[1:]]
    assert {"gcn", "gat", "sage", "gt", "gin"} <= set(names)


def test_unknown_category_is_an_error_listing_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_:
        list_main(["list", "datasets", "--category", "socail"])
    assert exit_.value.code == 2
    assert "unknown category 'socail'" in capsys.readouterr().err


def test_the_readme_example_runs_as_written(tmp_path, monkeypatch, capsys):
    readme = DOC.parents[1] / "README.md"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(first_python_block(readme.read_text()), str(readme), "exec"), namespace)
    summary = namespace["report"].summary()
    assert list(summary["model"]) == ["gcn", "sage", "mlp"] and set(summary["n"]) == {5}
    assert "w_p_holm" in capsys.readouterr().out
