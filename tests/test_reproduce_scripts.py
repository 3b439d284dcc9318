"""The reproduction scripts (benchmarks/reproduce_*.py) as run: refusals without records,
cells that stay missing or open, the Table 2 summary rows and the reference-package file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import reproduce_common as rc  # noqa: E402
import reproduce_gn_cross_category as cc  # noqa: E402
import reproduce_gn_pairwise as gp  # noqa: E402
import reproduce_ml_benchmark as mb  # noqa: E402
import reproduce_ml_synthetic as ms  # noqa: E402
import reproduce_pairwise_stats as ps  # noqa: E402

RESTORE = "python -m graphnetz records restore --all"


@pytest.fixture
def doc(tmp_path):
    """A copy of docs/reproduction.md (every section's markers) for --doc."""
    path = tmp_path / "reproduction.md"
    path.write_bytes(rc.DOC.read_bytes())
    return path


def write_record(folder: Path, name: str, **record) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "result.json").write_text(json.dumps(record))


def refuse(monkeypatch, main, argv: list[str], doc: Path, *names: str) -> str:
    """Run a script's main() and return its message: it must stop with a non-zero status,
    name each of ``names`` and leave the doc byte for byte as it was."""
    before = doc.read_bytes()
    monkeypatch.setattr(sys, "argv", ["script", *argv, "--doc", str(doc)])
    with pytest.raises(SystemExit) as stop:
        main()
    assert stop.value.code not in (0, None)
    message = str(stop.value.code)
    for name in names:
        assert name in message
    assert doc.read_bytes() == before
    return message


# --- no records: stop before writing ----------------------------------------------------


@pytest.mark.parametrize(
    "main, argv",
    [
        (cc.main, ["{sweep}"]),
        (gp.main, ["{sweep}"]),
        (mb.main, ["{sweep}"]),
        (ms.main, ["--features", "{sweep}", "--homophily", "{sweep}"]),
    ],
    ids=["cross_category", "pairwise", "ml_benchmark", "ml_synthetic"],
)
@pytest.mark.parametrize("state", ["missing", "empty", "only failed runs"])
def test_every_script_refuses_a_sweep_without_finished_runs(
    monkeypatch, tmp_path, doc, main, argv, state
):
    sweep = tmp_path / "outputs" / "multirun" / "repro"
    if state != "missing":
        sweep.mkdir(parents=True)
    if state == "only failed runs":
        write_record(sweep, "0", status="failed", dataset="cora", model="gcn", seed=0)
    argv = [a.format(sweep=sweep) for a in argv]
    message = refuse(monkeypatch, main, argv, doc, str(sweep), RESTORE)
    assert ("does not exist" if state == "missing" else "no finished run") in message


def test_a_named_extra_sweep_without_runs_is_refused_too(monkeypatch, tmp_path, doc):
    main_sweep, extra = tmp_path / "cross_category", tmp_path / "fixed_negatives"
    write_record(main_sweep, "0", status="ok", dataset="cora", model="gcn", seed=0)
    argv = [str(main_sweep), "--fixed-negatives", str(extra)]
    refuse(monkeypatch, cc.main, argv, doc, str(extra), RESTORE)
    argv = [str(main_sweep), "--reference-width", str(extra)]
    refuse(monkeypatch, gp.main, argv, doc, str(extra))


def test_runs_of_other_datasets_only_are_refused(monkeypatch, tmp_path, doc):
    sweep = tmp_path / "sweep"
    write_record(sweep, "0", status="ok", dataset="mutag", model="gcn", seed=0)
    refuse(monkeypatch, gp.main, [str(sweep)], doc, str(sweep), "cora")
    refuse(monkeypatch, mb.main, [str(sweep)], doc, str(sweep), "humloc")


def test_a_missing_reference_package_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "runs.json"
    with pytest.raises(SystemExit, match=f"--reference-package {missing}: no such file"):
        rc.read_reference_package_runs(str(missing))
    missing.write_text('{"cells": {}}')
    with pytest.raises(SystemExit, match="about.commands"):
        rc.package_command(str(missing))


def test_seed_span_of_no_records():
    assert rc.seed_span([]) == "no seeds"
    assert rc.seed_span([{"seed": 3}, {"seed": 0}]) == "seeds 0–3"


# --- Table 2: summary cells, PubMed and the pooled column ---------------------------------


def planetoid_values(datasets, spread=0.006, seeds=10):
    rng = np.random.default_rng(3)
    offsets = {"gcn": 0.0, "gat": 0.004, "sage": 0.009, "gt": 0.02}
    return {
        (d, m): {s: 0.7 + offsets[m] + float(rng.normal(0, spread)) for s in range(seeds)}
        for d in datasets
        for m in gp.MODELS
    }


def test_a_dataset_without_runs_keeps_its_summary_cells_as_missing():
    published = rc.read_published()
    for dataset in ("cora", "pubmed"):
        cells, pvalues = gp.dataset_cells(published, {}, {}, ({}, {}, {}), dataset, "SWEEP")
        assert pvalues == [] and len(cells) == 8  # 4 means, 4 summary cells
        assert [c.labels[2] for c in cells[4:]] == list(gp.SUMMARY.values())
        assert all(c.verdict == "missing" and c.published is not None for c in cells)
    assert "MANIFEST.md" in cells[0].missing_note and "dataset=pubmed" in cells[0].missing_note
    assert "PubMed's runs" in cells[4].missing_note


def test_the_seeds_needed_follow_graphnetz_stats():
    """The bootstrap's many-spreads shortcut gives seeds_needed's answer spread by spread."""
    from graphnetz.stats import seeds_needed

    spreads = np.array([0.0, 0.001, 0.004, 0.0071, 0.012, 0.02, 0.033])
    for gap in gp.GAPS:
        expected = [seeds_needed(s, gap, 0.8, ps.ALPHA) if s else 2 for s in spreads]
        assert ps.seeds_for_spreads(spreads, gap).tolist() == expected
        assert ps.pair_seeds(spreads[1:], gap) == expected[1:]
    grid = spreads.reshape(1, -1).repeat(2, axis=0)  # the bootstrap's [draws, pairs]
    assert ps.seeds_for_spreads(grid, 0.01).shape == grid.shape


def test_seeds_needed_cells_are_medians_over_the_pairs_and_compared():
    published = rc.read_published()
    values = planetoid_values(["cora"])
    cells, _ = gp.dataset_cells(published, values, {}, ({}, {}, {}), "cora", "SWEEP")
    by_label = {c.labels[2]: c for c in cells}
    spreads = gp.pair_spreads(values, "cora")
    assert len(spreads) == gp.PAIRS
    for gap in gp.GAPS:
        cell = by_label[gp.SUMMARY[f"seeds_for_{gap}"]]
        assert cell.published.value == {0.01: 13, 0.005: 44}[gap]
        assert cell.ours.mean == float(np.median(gp.pair_seeds(spreads, gap)))
        assert cell.verdict in ("inside", "explained", "open")
        if cell.verdict != "inside":
            said = cell.explanation or cell.open_note
            assert "bootstrap draws" in said


def test_the_pooled_column_only_over_every_published_dataset():
    published = rc.read_published()
    two = gp.pooled_cells(published, planetoid_values(["cora", "citeseer"]))
    assert [c.verdict for c in two] == ["missing"] * 4
    assert "PubMed's runs" in two[0].missing_note and two[0].labels[1] == "18 pairs"
    values = planetoid_values(gp.DATASETS)
    three = {c.labels[2]: c for c in gp.pooled_cells(published, values)}
    tests = [gp.pair_tests(values, d) for d in gp.DATASETS]
    resolved = three[gp.SUMMARY["resolved_pairs"]]
    assert resolved.ours.mean == sum(int(np.sum(t <= gp.ALPHA)) for _, t, _, _ in tests)
    mde = [m for *_, pair_mde in tests for m in pair_mde]
    assert three[gp.SUMMARY["median_mde"]].ours.mean == pytest.approx(np.median(mde))
    assert three[gp.SUMMARY["median_mde"]].published.value == 0.0137


def test_the_published_table_2_rows_and_the_two_cora_gat_values():
    published = rc.read_published()
    means = {m: published[("graphnetz", "2", "pubmed", m)].value for m in gp.MODELS.values()}
    assert means == {"GCN": 0.791, "GAT": 0.752, "GraphSAGE": 0.767, "GraphTransformer": 0.759}
    table_2 = published[("graphnetz", "2", "cora", "GAT")]
    table_3 = published[("graphnetz", "3", "cora/node_cls", "GAT")]
    assert (table_2.value, table_3.value) == (0.795, 0.797)
    assert "0.797 ± 0.009" in table_2.source and "0.795 ± 0.010" in table_3.source
    labels_mean = published[("mlgnc", "2", "synthetic1", "labels_mean")]
    assert "circular" in labels_mean.source


# --- Table 3: the knowledge-graph cells ------------------------------------------------


def test_the_knowledge_graph_cells_are_open_not_explained_by_a_note():
    """The input-feature note names a difference but no number that shows it accounts for
    the gap: without a run at the reference's input the cells stay open, with the note."""
    records = [
        {
            "dataset": "fb15k_237",
            "model": model,
            "seed": seed,
            "metrics": {"test": {"auc": 0.95 + 0.001 * seed}},
            "data": {"num_relations": 237, "num_nodes": 14541, "features": "learned"},
        }
        for model in ("gcn", "gat", "sage", "gt")
        for seed in range(3)
    ]
    cells = cc.table_cells(rc.read_published(), records, "SWEEP")
    kg = [c for c in cells if c.labels[0] == "fb15k-237/link_pred"]
    assert len(kg) == 4
    for cell in kg:
        assert cell.verdict == "open" and cell.explanation is None
        assert "eye(N, 128)" in cell.open_note and "not run at the reference's input" in (
            cell.open_note
        )


# --- synthetic section: numbers from the records ----------------------------------------


def test_the_synthetic_graphs_are_described_from_their_records():
    def record(task, seed, h, edges=1000):
        stats = {"label_homophily": h, "edges": edges, "labels_mean": 3.0}
        return {"dataset": task, "seed": seed, "dataset_facts": {"statistics": stats}}

    first_q, first_h = next(iter(ms.QUALITY)), next(iter(ms.HOMOPHILY))
    features = [record(first_q, s, 0.37, 1_000_000) for s in range(2)]
    homophily = [record(first_h, 0, 0.29), record(first_h, 1, 0.31), record(first_h, 1, 0.9)]
    text = ms.graphs_text(features, homophily)
    assert "label homophily 0.370, 1.00 M edges and 3.00 labels per node" in text
    assert f"{ms.HOMOPHILY[first_h]}: 0.300" in text  # first record per seed
    assert ms.graphs_text([], []) == ""


def test_a_remark_follows_any_verdict():
    cell = rc.Cell(("x",), rc.Published(3.23, None, 0.01, "s"), rc.Ours(3.234), remark="circular")
    assert rc.verdict_text(cell) == "matches (published rounding); circular"


# --- the reference package's file -----------------------------------------------------


def test_the_reference_package_file_lists_only_the_cells_written(monkeypatch, tmp_path):
    """An interrupted run leaves a command for the cells it wrote, not for those it was
    asked for; each cell keeps its metric."""
    import reference_package_runs as rp

    calls = []

    def run_cell(python, root, name, model, seeds):
        calls.append(model)
        if len(calls) > 1:
            raise RuntimeError("interrupted")
        return {"values": [0.6] * len(seeds), "epochs": 100, "wall_s": 1.0, "nodes": 3, "edges": 2}

    monkeypatch.setattr(rp, "peer_problem", lambda venv: None)
    monkeypatch.setattr(rp, "stage_planetoid", lambda root, name, mirror: None)
    monkeypatch.setattr(rp, "run_cell", run_cell)
    monkeypatch.setattr(rp.tempfile, "mkdtemp", lambda prefix="": str(tmp_path / prefix))
    out = tmp_path / "runs.json"
    argv = ["--peer-venv", "V", "--mirror", "M", "--datasets", "citeseer,cora"]
    argv += ["--models", "gat,gcn,sage", "--seeds", "2", "--out", str(out)]
    monkeypatch.setattr(sys, "argv", ["benchmarks/reference_package_runs.py", *argv])
    with pytest.raises(RuntimeError, match="interrupted"):
        rp.main()
    written = json.loads(out.read_text())
    assert list(written["cells"]) == ["citeseer/node_cls/gat"]
    assert written["cells"]["citeseer/node_cls/gat"]["metric"] == "test_acc"
    assert written["about"]["commands"] == [
        "python benchmarks/reference_package_runs.py --peer-venv V --mirror M "
        f"--datasets citeseer --models gat --seeds 2 --out {out}"
    ]


def test_a_reference_package_cell_with_fewer_seeds_runs_only_the_missing_ones(
    monkeypatch, tmp_path
):
    """Asked for 4 seeds, a cell with seeds 0-1 keeps them and gets seeds 2-3 appended; a
    cell with 4 already is not run."""
    import reference_package_runs as rp

    calls = []

    def run_cell(python, root, name, model, seeds):
        calls.append((model, seeds))
        values = [0.5 + s / 100 for s in seeds]  # seed s scores 0.5 + s / 100
        return {"values": values, "metric": "test_acc", "epochs": 200, "wall_s": 3.0,
                "nodes": 3, "edges": 2}  # fmt: skip

    finished = {"metric": "test_acc", "epochs": 200, "nodes": 3, "edges": 2}
    cells = {
        "cora/node_cls/gcn": {"values": [0.5, 0.51], "wall_s": 2.0, **finished},
        "cora/node_cls/gat": {"values": [0.7] * 4, "wall_s": 9.0, **finished},
    }
    out = tmp_path / "runs.json"
    out.write_text(json.dumps({"about": {}, "cells": cells}))
    monkeypatch.setattr(rp, "peer_problem", lambda venv: None)
    monkeypatch.setattr(rp, "stage_planetoid", lambda root, name, mirror: None)
    monkeypatch.setattr(rp, "run_cell", run_cell)
    monkeypatch.setattr(rp.tempfile, "mkdtemp", lambda prefix="": str(tmp_path / prefix))
    argv = ["--peer-venv", "V", "--mirror", "M", "--datasets", "cora", "--models", "gcn,gat"]
    monkeypatch.setattr(sys, "argv", ["rp", *argv, "--seeds", "4", "--out", str(out)])
    rp.main()
    assert calls == [("GCN", range(2, 4))]
    written = json.loads(out.read_text())["cells"]
    assert written["cora/node_cls/gcn"]["values"] == [0.5, 0.51, 0.52, 0.53]
    assert written["cora/node_cls/gcn"]["wall_s"] == 5.0
    assert written["cora/node_cls/gat"] == cells["cora/node_cls/gat"]


def test_a_reference_package_cell_is_not_extended_on_another_graph():
    import reference_package_runs as rp

    cell = {"values": [0.5], "epochs": 200, "wall_s": 1.0, "nodes": 3, "edges": 2}
    more = {**cell, "metric": "test_auc", "edges": 4}  # an old link cell: test AUC
    with pytest.raises(SystemExit, match="ran with edges 2, the missing ones would run with 4"):
        rp.extend_cell("x/link_pred/gcn", cell, more)


def test_the_shipped_reference_package_file_says_what_it_holds():
    path = BENCHMARKS / "reproduce" / "reference_package_runs.json"
    data = json.loads(path.read_text())
    for command in data["about"]["commands"]:
        datasets = command.split("--datasets ")[1].split()[0].split(",")
        models = command.split("--models ")[1].split()[0].split(",")
        for dataset in datasets:
            for model in models:
                assert any(k.startswith(dataset) and k.endswith(f"/{model}") for k in data["cells"])
    metrics = {c.get("metric", "test_auc") for k, c in data["cells"].items() if "node_cls" in k}
    assert metrics == {"test_acc"} and "test AUC per seed" not in data["about"]["reference"]
