"""What the README says of the catalogue and the task defaults is what the configs hold."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from graphnetz.config_dir import CONF_DIR

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_category_count_and_names_are_the_dataset_configs():
    categories = {
        yaml.safe_load(p.read_text())["category"] for p in (CONF_DIR / "dataset").glob("*.yaml")
    }
    said = re.search(
        r"fall in (\d+) categories: the \d+ research categories \(([^)]*)\) and `(\w+)`",
        _flat(README),
    )
    assert said, "the README no longer says how many categories there are"
    named = {c.strip() for c in said.group(2).split(",")} | {said.group(3)}
    assert int(said.group(1)) == len(categories) and named == categories


def test_the_selection_default_said_per_task_type_is_its_config():
    task = {p.stem: yaml.safe_load(p.read_text()) for p in (CONF_DIR / "task").glob("*.yaml")}
    said = re.search(r"`final` for ([^;]*); `best_val` for the multi-label tasks", _flat(README))
    assert said
    final = set(re.findall(r"`(\w+)`", said.group(1)))
    assert final == {t for t, c in task.items() if c["selection"] == "final"}
    assert {t for t in task if t.startswith("ml_")} == set(task) - final
    assert all(task[t]["selection"] == "best_val" for t in set(task) - final)
    assert "`ml_graph_cls` without early stopping" in _flat(README)
    assert task["ml_graph_cls"]["patience"] is None
    assert f"`ml_node_cls` with `task.patience={task['ml_node_cls']['patience']}`" in _flat(README)
