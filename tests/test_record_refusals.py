"""Run records the report refuses to read: each lands in ``unreadable`` with a reason that
names the bad value, and the readable records around it are still analysed."""

from __future__ import annotations

import json

import pytest

from graphnetz.report import BenchmarkReport


def good(**changes) -> dict:
    record = {
        "schema_version": 1,
        "task": "cora/node_cls",
        "model": "gcn",
        "seed": 0,
        "status": "ok",
        "primary_metric": "accuracy",
        "direction": "max",
        "metrics": {"test": {"accuracy": 0.8}},
    }
    record.update(changes)
    return record


def read(bad: dict) -> BenchmarkReport:
    return BenchmarkReport.from_records([good(seed=1), bad])


def only_reason(report: BenchmarkReport) -> str:
    [entry] = report.unreadable
    return entry["reason"]


def test_a_readable_record_is_analysed():
    report = BenchmarkReport.from_records([good()])
    assert report.unreadable == [] and report.failed == [] and report.skipped == []
    assert report.selected()[["task", "model", "seed", "value"]].to_dict("records") == [
        {"task": "cora/node_cls", "model": "gcn", "seed": 0, "value": 0.8}
    ]


def test_missing_primary_metric_field_is_refused_by_name():
    bad = good()
    del bad["primary_metric"]
    report = read(bad)
    assert "primary_metric" in only_reason(report)
    assert report.selected()["seed"].tolist() == [1]  # the good record survives


def test_primary_metric_absent_from_the_test_metrics_is_refused_by_name():
    report = read(good(primary_metric="macro_ap"))
    assert "metrics.test.macro_ap" in only_reason(report)


def test_unknown_status_is_refused_with_the_value_and_the_valid_ones():
    reason = only_reason(read(good(status="done")))
    assert "'done'" in reason
    assert all(s in reason for s in ("ok", "skipped", "failed"))


def test_non_integer_seed_is_refused_with_the_value():
    assert "'three'" in only_reason(read(good(seed="three")))


@pytest.mark.parametrize("seed", [1.5, True])
def test_a_seed_that_is_not_a_whole_number_is_refused_with_the_value(seed):
    assert repr(seed) in only_reason(read(good(seed=seed)))


def test_bad_direction_is_refused_with_the_value_and_the_valid_ones():
    reason = only_reason(read(good(direction="up")))
    assert "'up'" in reason and "'max'" in reason and "'min'" in reason


def test_unknown_schema_version_is_refused_with_the_value():
    reason = only_reason(read(good(schema_version=3)))
    assert "schema_version 3" in reason and "[1, 2]" in reason


def test_run_dirs_name_the_file_of_a_refused_record(tmp_path):
    (tmp_path / "0").mkdir()
    (tmp_path / "1").mkdir()
    (tmp_path / "0" / "result.json").write_text(json.dumps(good()))
    (tmp_path / "1" / "result.json").write_text(json.dumps(good(seed=1, direction="sideways")))
    report = BenchmarkReport.from_run_dirs([tmp_path])
    [entry] = report.unreadable
    assert entry["path"] == str(tmp_path / "1" / "result.json")
    assert "'sideways'" in entry["reason"]
    assert report.selected()["seed"].tolist() == [0]


def test_run_dirs_list_a_half_written_file_instead_of_failing(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(good())[:40])
    report = BenchmarkReport.from_run_dirs([tmp_path])
    [entry] = report.unreadable
    assert entry["path"] == str(tmp_path / "result.json")
    assert "JSONDecodeError" in entry["reason"]
