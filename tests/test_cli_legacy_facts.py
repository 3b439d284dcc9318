"""Dataset facts of schema-1 records: a config that cannot be resolved here is a note in
the entry, never an exception."""

from __future__ import annotations

from graphnetz.cli.legacy_facts import complete_dataset_facts
from graphnetz.report.records import dataset_entry

UNSET = "GRAPHNETZ_TEST_VARIABLE_NEVER_SET"


def schema_1_record(paths: dict) -> dict:
    """An ``ml_node_cls`` record as schema 1 wrote it: no facts, its config unresolved."""
    return {
        "schema_version": 1,
        "status": "ok",
        "task": "blogcatalog/ml_node_cls",
        "dataset": "blogcatalog",
        "task_type": "ml_node_cls",
        "model": "gcn",
        "seed": 0,
        "config": {
            "seed": 0,
            "dataset": {
                "name": "blogcatalog",
                "split": None,
                "loader": {"_target_": "graphnetz.data.multilabel.load_blogcatalog"},
            },
            "paths": paths,
            "model": {"name": "gcn"},
            "task": {"type": "ml_node_cls"},
        },
    }


def test_paths_of_an_unset_environment_variable_become_a_note(monkeypatch):
    monkeypatch.delenv(UNSET, raising=False)
    record = schema_1_record({"data_dir": "${oc.env:" + UNSET + "}/data"})
    [entry] = complete_dataset_facts([dataset_entry(record)])
    assert entry["facts"] is None
    assert entry["note"].startswith("not loaded (") and UNSET in entry["note"]


def test_a_split_that_cannot_be_resolved_becomes_a_note(monkeypatch):
    record = schema_1_record({"data_dir": "data"})
    record["config"]["dataset"]["split"] = "${oc.env:" + UNSET + "}"
    monkeypatch.delenv(UNSET, raising=False)
    [entry] = complete_dataset_facts([dataset_entry(record)])
    assert entry["facts"] is None and UNSET in entry["note"]
