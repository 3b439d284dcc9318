"""Schema-1 run records (no dataset_facts, config unresolved) through ``analyze.py``: the
command line's legacy path measures the facts, and the report shows the same Datasets
section as when the section reloaded data itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphnetz.cli.analyze import main
from graphnetz.data.ml_synthetic import load_ml_synthetic
from graphnetz.data.multilabel import load_humloc
from graphnetz.report import BenchmarkReport
from graphnetz.tasks.multilabel_metrics import prior_macro_ap

# As schema-1 records stored it: paths still hold their ${oc.env:...} interpolations.
PATHS = {
    "data_dir": "${oc.env:GRAPHNETZ_DATA_DIR,data}",
    "output_dir": "${oc.env:GRAPHNETZ_OUTPUT_DIR,outputs}",
    "data_mirror": "${oc.env:GRAPHNETZ_DATA_MIRROR,null}",
}
HUMLOC = {
    "name": "humloc",
    "split": None,
    "loader": {"_target_": "graphnetz.data.multilabel.load_humloc"},
}
SYNTHETIC_PARAMS = {"num_nodes": 120, "num_features": 6, "num_labels": 5, "sphere_seed": 0}
SYNTHETIC = {
    "name": "ml_synthetic",
    "split": None,
    "loader": {"_target_": "graphnetz.data.ml_synthetic.load_ml_synthetic", **SYNTHETIC_PARAMS},
}


def schema1_record(dataset: dict, model: str, seed: int) -> dict:
    name = dataset["name"]
    return {
        "schema_version": 1,
        "status": "ok",
        "task": f"{name}/ml_node_cls",
        "dataset": name,
        "task_type": "ml_node_cls",
        "model": model,
        "seed": seed,
        "primary_metric": "macro_ap",
        "direction": "max",
        "metrics": {"test": {"macro_ap": 0.3 + 0.01 * seed + 0.05 * (model == "gcn")}},
        "config": {"dataset": dataset, "paths": PATHS, "seed": seed},
    }


def write_sweep(root: Path, records: list[dict]) -> Path:
    for i, rec in enumerate(records):
        run = root / f"{i}_{rec['dataset']}_{rec['model']}_s{rec['seed']}"
        run.mkdir(parents=True)
        (run / "result.json").write_text(json.dumps({**rec, "run_dir": str(run)}))
    return root


@pytest.fixture
def env_paths(monkeypatch, data_dir, mirror):
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(mirror))


def test_analyze_measures_the_facts_of_schema1_records(tmp_path, env_paths, data_dir, mirror):
    records = [schema1_record(HUMLOC, m, s) for m in ("gcn", "mlp") for s in (0, 1)]
    records += [schema1_record(SYNTHETIC, m, s) for m in ("gcn", "mlp") for s in (3, 2)]
    sweep = write_sweep(tmp_path / "sweep", records)
    assert main([str(sweep), "--out", str(tmp_path / "report")]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    section = md.split("## Datasets", 1)[1]
    # HumLoc: 3106 proteins, 15978 undirected edges, 32 features (MLGNC HumanGo)
    assert "| humloc | 3106 | 15978 | 32 |" in section
    humloc = load_humloc(str(data_dir), mirror)
    chance = prior_macro_ap(humloc.y[humloc.test_mask])  # one predefined split for all seeds
    assert f"| humloc | 0, 1 | {chance:.4f} |" in section
    # a generated graph: the statistics and chance level of the smallest seed only
    graph = load_ml_synthetic(seed=2, **SYNTHETIC_PARAMS)
    assert "| ml_synthetic | 120 |" in section
    assert f"| ml_synthetic | 2 | {prior_macro_ap(graph.y[graph.test_mask]):.4f} |" in section
    assert "- ml_synthetic: generated per run seed; statistics of seed 2" in section


def test_an_unloadable_schema1_dataset_is_a_note(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(tmp_path / "empty_mirror"))
    (tmp_path / "empty_mirror").mkdir()
    eukloc = {
        **HUMLOC,
        "name": "eukloc",
        "loader": {"_target_": "graphnetz.data.multilabel.load_eukloc"},
    }
    sweep = write_sweep(tmp_path / "sweep", [schema1_record(eukloc, m, 0) for m in ("gcn", "mlp")])
    assert main([str(sweep), "--out", str(tmp_path / "report")]) == 0
    assert "- eukloc: not loaded (" in (tmp_path / "report" / "report.md").read_text()


def test_the_report_alone_never_loads_data_for_schema1_records(tmp_path, env_paths):
    sweep = write_sweep(tmp_path / "sweep", [schema1_record(HUMLOC, "gcn", 0)])
    section = BenchmarkReport.from_run_dirs([sweep]).analysis().datasets
    assert section.rows == () and section.notes[0].startswith("humloc: no dataset facts")
