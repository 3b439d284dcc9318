"""experiment=cross_category and experiment=catalogue_offline: what they sweep, each task's
type and epochs, and a real (shortened) cross-category sweep ending in a report.

The network-catalogue configs (euroroad, board_directors, ...) come from their own loader;
until they are present in ``conf/dataset`` the checks of those names are skipped one by one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from graphnetz.config_dir import CONF_DIR
from graphnetz.data.registry import catalogue, offline_availability
from graphnetz.training.resolve import resolve_run

REPO = Path(__file__).resolve().parents[1]
NETWORK_CONFIGS = {
    "euroroad",
    "board_directors",
    "internet_as",
    "power_grid",
    "celegans",
    "terrorists_911",
    "train_terrorists",
    "dnc_emails",
    "hospital_contacts",
    "high_school_contacts",
    "eu_airlines",
    "london_transport",
    "karate_network",
    "internet_topology",
    "route_views",
    "product_space",
    "us_roads",
    "urban_streets",
}
# SPEC §8: one task per category, with the reference benchmark's epochs
CROSS_CATEGORY = {
    "tsp": ("link_pred", 80),
    "mutag": ("graph_cls", 40),
    "cora": ("node_cls", 100),
    "fb15k_237": ("link_pred", 20),
    "euroroad": ("link_pred", 80),
    "board_directors": ("link_pred", 40),
    "internet_as": ("link_pred", 40),
    "mnist_superpixels": ("graph_cls", 4),
    "ising": ("link_pred", 60),
    "terrorists_911": ("link_pred", 120),
}


def sweep_params(experiment: str) -> dict[str, list[str]]:
    cfg = yaml.safe_load((CONF_DIR / "experiment" / f"{experiment}.yaml").read_text())
    params = cfg["hydra"]["sweeper"]["params"]
    return {k: str(v).split(",") for k, v in params.items()}


def require_config(name: str) -> None:
    if not (CONF_DIR / "dataset" / f"{name}.yaml").is_file():
        if name in NETWORK_CONFIGS:
            pytest.skip(f"network-catalogue config {name!r} not present yet")
        pytest.fail(f"conf/dataset/{name}.yaml is missing")


def test_cross_category_sweeps_ten_tasks_five_models_ten_seeds():
    params = sweep_params("cross_category")
    assert set(params["dataset"]) == set(CROSS_CATEGORY)
    assert params["model"] == ["gcn", "gat", "sage", "gt", "gin"]
    assert params["seed"] == ["range(10)"]


@pytest.mark.parametrize("dataset", sorted(CROSS_CATEGORY))
def test_each_cross_category_task_has_its_type_and_reference_epochs(make_cfg, dataset):
    require_config(dataset)
    spec = resolve_run(make_cfg("experiment=cross_category", f"dataset={dataset}"))
    assert (spec.task_type, spec.max_epochs) == CROSS_CATEGORY[dataset]


def test_catalogue_offline_sweeps_every_offline_non_multilabel_entry(mirror):
    params = sweep_params("catalogue_offline")
    assert params["model"] == ["gcn", "gat", "sage", "gt"]
    listed = params["dataset"]
    assert len(listed) == len(set(listed))
    entries = {e.config: e for e in catalogue()}
    offline = {
        name
        for name, e in entries.items()
        if e.category != "multilabel" and offline_availability(e, None, mirror).offline
    }
    assert offline <= set(listed)
    for name in listed:
        if name not in entries:
            assert name in NETWORK_CONFIGS, f"catalogue_offline lists unknown dataset {name!r}"
            continue
        assert offline_availability(entries[name], None, mirror).offline is not False, name


@pytest.mark.slow
def test_a_short_cross_category_sweep_reports_the_offline_tasks_and_names_mnist(tmp_path, mirror):
    """The experiment's own sweep, narrowed to the offline tasks plus MNIST superpixels
    (whose files a fresh mirror of MUTAG and Cora lacks, and downloads are blocked)."""
    own_mirror = tmp_path / "mirror"
    for part in ("TUDataset/MUTAG", "Planetoid/Cora"):
        (own_mirror / part).parent.mkdir(parents=True, exist_ok=True)
        (own_mirror / part).symlink_to(mirror / part)
    env = dict(os.environ, https_proxy="http://127.0.0.1:9", http_proxy="http://127.0.0.1:9")
    sweep = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "train.py",
            "-m",
            "experiment=cross_category",
            "seed=0,1",
            "trainer.max_epochs=2",
            "dataset=tsp,mutag,cora,ising,mnist_superpixels",
            "model=gcn,sage,gin",
            "num_threads=1",
            f"hydra.sweep.dir={sweep}",
            f"paths.data_dir={tmp_path / 'data'}",
            f"paths.data_mirror={own_mirror}",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    assert len(found) == 5 * 3 * 2
    status = {(r["task"], r["model"]): r["status"] for r in found}
    assert status[("cora/node_cls", "gin")] == "skipped"
    assert status[("mutag/graph_cls", "gin")] == "ok"
    assert status[("mnist_superpixels/graph_cls", "gcn")] == "failed"

    proc = subprocess.run(
        [sys.executable, "analyze.py", str(sweep)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (sweep / "report" / "report.md").read_text()
    for task in ("tsp/link_pred", "mutag/graph_cls", "cora/node_cls", "ising/link_pred"):
        assert f"### {task}" in report
    failed = report.split("### Failed (6)")[1].split("###")[0]
    assert failed.count("mnist_superpixels/graph_cls") == 6
    assert "DatasetUnavailableError" in failed and "MNISTSuperpixels/raw" in failed
    assert "Friedman χ²_F" in report  # ranks over the four tasks present
