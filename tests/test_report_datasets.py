"""The Datasets section from the records' dataset_facts, and the analysis computed once."""

from __future__ import annotations

import json

import pytest

from graphnetz.report import BenchmarkReport
from graphnetz.report.markdown_datasets import datasets_markdown

# A loader no Python module provides: any attempt to reload the data would fail.
LOADER = {"_target_": "nowhere.load_graph"}


def stats_row(name: str, nodes: int) -> dict:
    return {
        "dataset": name,
        "nodes": nodes,
        "edges": 2 * nodes,
        "features": 8,
        "avg_clustering": 0.25,
        "label_homophily": 0.5,
        "classes": 3,
        "labels_median": 1.0,
        "labels_mean": 1.5,
        "labels_max": 3,
        "labels_p25": 1.0,
        "labels_p50": 1.0,
        "labels_p75": 2.0,
        "unlabelled_fraction": 0.0,
    }


def record(model, seed, chance, *, dataset="toy", nodes=10, seeded=False, loader=LOADER):
    """An ml_node_cls run record with its dataset facts, as training writes them (the
    reader's accepted schema_version is left to its default)."""
    return {
        "status": "ok",
        "task": f"{dataset}/ml_node_cls",
        "dataset": dataset,
        "task_type": "ml_node_cls",
        "model": model,
        "seed": seed,
        "primary_metric": "macro_ap",
        "direction": "max",
        "metrics": {"test": {"macro_ap": 0.5 + 0.01 * seed + (model == "gcn") * 0.1}},
        "config": {"dataset": {"name": dataset, "loader": loader}},
        "dataset_facts": {
            "statistics": stats_row(dataset, nodes),
            "chance": {
                "metric": "macro_ap",
                "split": "test",
                "rule": "constant score",
                "value": chance,
            },
            "seeded_loader": seeded,
        },
    }


def section_lines(markdown: str) -> list[str]:
    return markdown.split("## Datasets", 1)[1].splitlines()


def test_rows_and_chance_come_from_the_records_facts_without_reloading():
    records = [record(m, s, c) for m in ("gcn", "mlp") for s, c in ((0, 0.10), (1, 0.30))]
    report = BenchmarkReport.from_records(records)
    section = report.analysis().datasets
    assert [r["nodes"] for r in section.rows] == [10]
    # mean over the distinct seeds 0 and 1 (each seed once, however many models ran it)
    assert section.chance[0]["seeds"] == [0, 1]
    assert section.chance[0]["value"] == pytest.approx((0.10 + 0.30) / 2)
    lines = section_lines(report.to_markdown())
    assert (
        "| toy | 10 | 20 | 8 | 0.250 | 0.500 | 3 | 1.000 | 1.500 | 3 | 1.000 | 1.000 | 2.000 | 0.000 |"
        in lines
    )
    assert "| toy | 0, 1 | 0.2000 |" in lines


def test_a_seeded_loader_shows_its_smallest_seed_and_averages_the_chance_of_all_seeds():
    records = [
        record("gcn", 3, 0.40, nodes=30, seeded=True),
        record("gcn", 2, 0.20, nodes=20, seeded=True),
    ]
    section = BenchmarkReport.from_records(records).analysis().datasets
    assert [r["nodes"] for r in section.rows] == [20]
    # each seed drew its own graph: the chance level is the mean of the two graphs' values
    assert section.chance[0]["seeds"] == [2, 3]
    assert section.chance[0]["value"] == pytest.approx((0.20 + 0.40) / 2)
    assert section.notes == (
        "toy: generated per run seed; statistics of seed 2, "
        "chance level the mean over the seeds' graphs",
    )


def with_auroc(rec: dict) -> dict:
    rec["metrics"]["test"]["macro_auroc"] = 0.52
    rec["metrics"].setdefault("val", {})["macro_ap"] = 0.3
    return rec


@pytest.mark.parametrize("metric", [None, "macro_ap"])
def test_the_chance_table_is_shown_for_test_macro_ap(metric):
    records = [with_auroc(record(m, 0, 0.1)) for m in ("gcn", "mlp")]
    report = BenchmarkReport.from_records(records, metric=metric)
    md = datasets_markdown(report.analysis().datasets, metric=metric)
    assert "| toy | 0 | 0.1000 |" in md.splitlines()
    assert "test macro AP (the primary metric) only" in md


@pytest.mark.parametrize("metric", ["macro_auroc", "val:macro_ap"])
def test_another_metric_gets_a_note_instead_of_the_macro_ap_chance_level(metric):
    # a constant score has test macro AP 0.1 here, but macro AUROC 0.5 and another
    # split's AP its own positive rate: 0.1 would mislead next to either
    records = [with_auroc(record(m, 0, 0.1)) for m in ("gcn", "mlp")]
    report = BenchmarkReport.from_records(records, metric=metric)
    md = datasets_markdown(report.analysis().datasets, metric=metric)
    assert "0.1000" not in md
    assert (
        "Chance level not shown: it is defined for test macro_ap (the primary metric on "
        f"test), not for the analysed metric {metric}."
    ) in md.splitlines()


def test_one_name_with_two_loader_configs_gives_two_labelled_rows():
    other = {**LOADER, "size": 2}
    records = [record("gcn", 0, 0.1), record("gcn", 1, 0.1, nodes=99, loader=other)]
    rows = BenchmarkReport.from_records(records).analysis().datasets.rows
    nodes = {r["dataset"]: r["nodes"] for r in rows}
    assert nodes == {
        f"toy [{json.dumps(LOADER)}]": 10,
        f"toy [{json.dumps(other, sort_keys=True)}]": 99,
    }


def test_records_without_facts_become_a_note_not_a_row():
    old = record("gcn", 0, 0.1)
    del old["dataset_facts"]
    section = BenchmarkReport.from_records([old]).analysis().datasets
    assert section.rows == () and "toy: no dataset facts" in section.notes[0]


def test_runs_of_other_task_types_give_no_section():
    rec = record("gcn", 0, 0.1)
    rec.update(task="toy/node_cls", task_type="node_cls")
    report = BenchmarkReport.from_records([rec])
    assert report.analysis().datasets.empty
    assert "## Datasets" not in report.to_markdown()


def test_the_section_is_the_last_part_of_report_md_and_of_report_json(tmp_path):
    report = BenchmarkReport.from_records([record("gcn", 0, 0.1), record("mlp", 0, 0.1)])
    md = report.write(tmp_path).read_text()
    assert md.index("## Runs not analysed") < md.index("## Datasets")
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["analysis"]["datasets"]["chance"][0]["value"] == pytest.approx(0.1)


def test_report_json_round_trip_keeps_the_section(tmp_path):
    report = BenchmarkReport.from_records([record("gcn", s, 0.1 * (s + 1)) for s in (0, 1)])
    back = BenchmarkReport.from_json(report.to_json(tmp_path / "r.json"))
    assert back.analysis().datasets == report.analysis().datasets


def test_the_analysis_is_computed_once_and_again_when_a_setting_changes():
    report = BenchmarkReport.from_records(
        [record(m, s, 0.1) for m in ("gcn", "mlp") for s in (0, 1, 2)]
    )
    first = report.analysis()
    assert report.analysis() is first
    summary = report.summary()
    summary["mean"] = -1.0  # callers get copies: the cached analysis is untouched
    assert (report.summary()["mean"] > 0).all() and report.analysis() is first
    report.alpha = 0.1
    again = report.analysis()
    assert again is not first and again.settings.alpha == 0.1
    report.pairwise_method = "wilcoxon"
    assert set(report.pairwise()["method"]) == {"wilcoxon"}
    assert report.analysis().settings.pairwise_method == "wilcoxon"
