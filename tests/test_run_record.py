"""The run record: one type, written atomically, read back equal; schema-1 records still read."""

from __future__ import annotations

import json

import pytest

from graphnetz.run_record import RECORD_NAME, RecordError, RunRecord

# A record as the schema-1 writer (before the resolved config) laid it out, key for key.
SCHEMA_1 = {
    "schema_version": 1,
    "status": "ok",
    "reason": None,
    "error": None,
    "task": "karate/node_cls",
    "dataset": "karate",
    "category": "social",
    "task_type": "node_cls",
    "model": "gcn",
    "seed": 3,
    "primary_metric": "accuracy",
    "direction": "max",
    "metrics": {"train": {"loss": 0.2, "accuracy": 1.0}, "test": {"accuracy": 0.75}},
    "selection": "final",
    "selected_epoch": 9,
    "epochs_run": 10,
    "history": [{"epoch": 9, "train_loss": 0.2, "test_accuracy": 0.75}],
    "data": {"split": "random (seed 3)", "n_train": 20},
    "wall_time_s": 0.5,
    "config": {"task": {"type": "auto", "lr": None}, "paths": {"data_mirror": "${oc.env:X,null}"}},
    "versions": {"torch": "2.13.0"},
    "run_dir": "/somewhere/0_karate_gcn_s3",
}


def test_a_record_round_trips_through_its_file(tmp_path):
    record = RunRecord(
        status="ok",
        task="cora/node_cls",
        model="gat",
        seed=4,
        primary_metric="accuracy",
        direction="max",
        metrics={"test": {"accuracy": 0.8}},
        dataset_facts={"statistics": None, "chance": None, "seeded_loader": False},
        config={"task": {"lr": 0.01}},
    )
    path = record.write(tmp_path)
    assert path == tmp_path / RECORD_NAME
    assert RunRecord.read(path) == record
    assert not list(tmp_path.glob("*.tmp"))  # written through a temporary file, renamed


def test_a_schema_1_record_reads_with_its_fields_and_no_dataset_facts(tmp_path):
    (tmp_path / RECORD_NAME).write_text(json.dumps(SCHEMA_1))
    record = RunRecord.read(tmp_path / RECORD_NAME)
    assert record.schema_version == 1 and record.dataset_facts is None
    assert (record.task, record.model, record.seed, record.test_value()) == (
        "karate/node_cls",
        "gcn",
        3,
        0.75,
    )
    assert record.config == SCHEMA_1["config"]  # kept as stored, unresolved
    assert record.finished


def test_a_written_record_has_every_field_of_schema_1_and_the_new_ones():
    written = RunRecord(status="skipped", reason="no").to_dict()
    assert set(SCHEMA_1) <= set(written)
    assert {"dataset_facts", "resumed"} <= set(written) and written["schema_version"] == 2


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"schema_version": 7}, "unsupported schema_version 7"),
        ({"status": "done"}, "unknown status 'done'"),
        ({"seed": "three"}, "seed is not an integer: 'three'"),
        ({"direction": "up"}, "direction 'up' is not one of"),
        ({"metrics": {"test": {"loss": 1.0}}}, "missing metrics.test.accuracy"),
        ({"primary_metric": None}, "missing field(s): primary_metric"),
    ],
)
def test_a_malformed_record_is_refused_with_the_reason(change, reason):
    with pytest.raises(RecordError, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        RunRecord.from_dict({**SCHEMA_1, **change})


def test_a_file_that_is_not_json_is_refused_not_raised_as_a_crash(tmp_path):
    (tmp_path / RECORD_NAME).write_text('{"status": "ok", "metri')
    with pytest.raises(RecordError, match="JSONDecodeError"):
        RunRecord.read(tmp_path / RECORD_NAME)
    with pytest.raises(RecordError, match="not a JSON object"):
        RunRecord.from_dict([1, 2])


def test_failed_and_skipped_records_need_no_metrics():
    failed = RunRecord.from_dict({"status": "failed", "seed": "x", "error": "Traceback"})
    assert failed.status == "failed" and not failed.finished and failed.seed == "x"
    assert RunRecord.from_dict({"status": "skipped", "reason": "r"}).finished
