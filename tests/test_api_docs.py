"""docs/python_api.md's examples run as written; ``python -m graphnetz list`` works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphnetz import iter_benchmark_tasks
from graphnetz.api.models import registered_models, unregister_model
from graphnetz.cli.list import main as list_main

DOC = Path(__file__).resolve().parents[1] / "docs" / "python_api.md"


def first_python_block(text: str) -> str:
    return python_blocks(text)[0]


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run_block(index: int) -> dict:
    namespace: dict = {"__name__": "docs_example"}
    exec(compile(python_blocks(DOC.read_text())[index], str(DOC), "exec"), namespace)
    return namespace


@pytest.fixture
def in_tmp(tmp_path, monkeypatch, one_thread):
    """The examples run in a fresh folder (they write outputs/ there); data is processed
    into the session's data folder, and what they register is unregistered afterwards."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in ("TinyGCN", "DataEncoder"):
        if name in registered_models():
            unregister_model(name)


def test_the_reference_style_example_runs_as_written(in_tmp, monkeypatch, mirror, data_dir, capsys):
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(data_dir))
    summary = run_block(0)["report"].summary()
    social = {t.key for t in iter_benchmark_tasks("social", "node_cls")}
    printed = capsys.readouterr().out
    unavailable = set(re.findall(r"^unavailable: (\S+):", printed, re.M))
    assert set(summary["task"]) == social - unavailable and "pubmed/node_cls" in unavailable
    assert set(summary["model"]) == {"TinyGCN"} and set(summary["n"]) == {2}


def test_the_own_data_example_runs_as_written(in_tmp, monkeypatch, data_dir, capsys):
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(data_dir))
    report = run_block(1)["report"]
    summary = report.summary()
    models = ["GCN", "Mine", "Enc", "Wide"]
    assert list(zip(summary["task"], summary["model"], strict=True)) == [
        (task, model) for task in ("karate/node_cls", "communities/node_cls") for model in models
    ]
    assert set(summary["n"]) == {2}
    assert [r["model"] for r in report.skipped] == ["GIN"] * 4  # 2 tasks x 2 seeds
    assert len(list((in_tmp / "outputs/api_demo").rglob("result.json"))) == 20
    assert (in_tmp / "outputs/api_demo/report/report.md").is_file()
    assert "[20/20]" in capsys.readouterr().out  # one progress line per run


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


def test_the_readme_example_runs_as_written(tmp_path, monkeypatch, capsys, one_thread):
    readme = DOC.parents[1] / "README.md"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(first_python_block(readme.read_text()), str(readme), "exec"), namespace)
    summary = namespace["report"].summary()
    assert list(summary["model"]) == ["gcn", "sage", "mlp"] and set(summary["n"]) == {5}
    assert "w_p_holm" in capsys.readouterr().out
