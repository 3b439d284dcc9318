"""The dataset catalogue: every config composes and resolves, the registry matches the YAML
files, every entry available offline here loads and carries what its task needs, the raw
layouts match what the installed torch_geometric reads, and offline without files a loader
fails with the named error.

Entries are read from the mirror through ``paths.data_mirror`` (as a user sets it); under
CI=true a missing mirror fails these tests (the ``mirror`` fixture).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from hydra.utils import get_class

from graphnetz.config_dir import CONF_DIR
from graphnetz.data import pyg
from graphnetz.data.integrity import read_checksums
from graphnetz.data.loading import load_dataset
from graphnetz.data.mirror import DatasetUnavailableError
from graphnetz.data.registry import (
    LOADER_REGISTRY,
    catalogue,
    entry_sources,
    offline_availability,
)
from graphnetz.task_types import TASK_TYPES
from graphnetz.training.pipeline import build_run
from graphnetz.training.resolve import resolve_run

CONFIGS = sorted(p.stem for p in (CONF_DIR / "dataset").glob("*.yaml"))
CATEGORIES = {
    "combinatorial",
    "biology",
    "social",
    "knowledge",
    "infrastructure",
    "finance",
    "computing",
    "vision",
    "physics",
    "security",
    "multilabel",
}


def raw_yaml(config: str) -> dict:
    return yaml.safe_load((CONF_DIR / "dataset" / f"{config}.yaml").read_text())


@pytest.mark.parametrize("config", CONFIGS)
def test_every_dataset_config_composes_and_resolves_its_natural_task(make_cfg, config):
    cfg = make_cfg(f"dataset={config}")
    spec = resolve_run(cfg)
    declared = raw_yaml(config)
    assert declared["category"] in CATEGORIES
    assert spec.task_type in declared["task_types"]
    assert set(declared["task_types"]) <= set(TASK_TYPES)
    assert spec.max_epochs == declared["epochs"][spec.task_type]
    assert set(declared["epochs"]) == set(declared["task_types"])  # epochs for each task
    assert declared.get("features"), "the feature rule must be stated"


@pytest.mark.parametrize("config", [c for c in CONFIGS if "pyg_class" in raw_yaml(c)["loader"]])
def test_pyg_class_of_each_config_exists_in_torch_geometric(config):
    path = raw_yaml(config)["loader"]["pyg_class"]
    assert path.startswith("torch_geometric.datasets.")
    assert isinstance(get_class(path), type)


def test_loader_registry_is_category_then_task_type_then_names_from_the_yaml_files():
    expected: dict = {}
    for config in CONFIGS:
        declared = raw_yaml(config)
        for task_type in declared["task_types"]:
            expected.setdefault(declared["category"], {}).setdefault(task_type, set()).add(
                declared["name"]
            )
    assert {c: {t: set(n) for t, n in tt.items()} for c, tt in LOADER_REGISTRY.items()} == expected
    assert {"tsp", "vrp", "graph_colouring", "max_flow", "bipartite_matching", "max_cut"} <= set(
        LOADER_REGISTRY["combinatorial"]["link_pred"]
    )
    assert "ising" in LOADER_REGISTRY["physics"]["link_pred"]


# -------------------------------------------------- raw layouts vs torch_geometric's own
# How each class turns its ``name`` argument into ``self.name`` (read from its __init__).
PYG_NAME_RULES = {
    "HeterophilousGraphDataset": lambda n: n.lower().replace("-", "_"),
    "LRGBDataset": lambda n: n.lower(),
}


@pytest.mark.parametrize("config", [c for c in CONFIGS if "pyg_class" in raw_yaml(c)["loader"]])
def test_raw_layout_is_where_the_installed_class_reads(config):
    loader = raw_yaml(config)["loader"]
    cls = get_class(loader["pyg_class"])
    name = loader.get("name")
    stand_in = SimpleNamespace(
        root="ROOT",
        name=PYG_NAME_RULES.get(cls.__name__, lambda n: n)(name) if name else None,
        urls=getattr(cls, "urls", None),
        category_ids=getattr(cls, "category_ids", None),
    )
    pyg_dir = cls.raw_dir.fget(stand_in)
    pyg_files = cls.raw_file_names.fget(stand_in)
    pyg_files = [pyg_files] if isinstance(pyg_files, str) else list(pyg_files)
    relative_dir, files = pyg.raw_location(loader["pyg_class"], name)
    assert relative_dir == f"{cls.__name__}/{Path(pyg_dir).relative_to('ROOT')}"
    assert set(pyg_files) <= set(files)


# ---------------------------------------------------------------- offline entries load
def _offline_entries() -> list:
    return [e for e in catalogue() if e.category != "multilabel"]


def _listed_in_mirror(entry, mirror: Path) -> list[str]:
    """The files of the mirror's SHA256SUMS inside the folders ``entry`` reads."""
    folders = [f"{remote.rstrip('/')}/" for remote, _, _ in entry_sources(entry) or []]
    return [path for path in read_checksums(mirror) if path.startswith(tuple(folders))]


@pytest.mark.parametrize("entry", _offline_entries(), ids=lambda e: e.config)
def test_every_offline_entry_loads_and_carries_what_its_tasks_need(
    make_cfg, mirror, entry, one_thread
):
    """Built the way a run builds it (config -> data -> task data -> model), per task type.
    Skipped only for a download-only entry: one whose files the mirror's SHA256SUMS lists
    must load from it."""
    status = offline_availability(entry, None, mirror)
    assert status.offline is not None, f"{entry.config}: {status}"
    if not status.offline:
        listed = _listed_in_mirror(entry, mirror)
        assert not listed, f"{entry.config}: the mirror lists {listed[:3]} but {status}"
        pytest.skip(f"{entry.config}: download only ({status})")
    for task_type in entry.task_types:
        cfg = make_cfg(f"dataset={entry.config}", f"task={task_type}", "model=gcn", mirror=mirror)
        built = build_run(resolve_run(cfg))
        assert built.data.out_channels >= 1
        assert built.data.info  # the split and sizes the record will carry


def test_minesweeper_and_tolokers_load_from_the_mirror_with_their_published_sizes(
    make_cfg, mirror, data_dir
):
    sizes = {"minesweeper": (10_000, 78_804, 7), "tolokers": (11_758, 1_038_000, 10)}
    for config, (nodes, edges, features) in sizes.items():
        cfg = make_cfg(f"dataset={config}", mirror=mirror)
        graph = load_dataset(cfg.dataset.loader, data_dir, cfg.paths.data_mirror)
        assert (graph.num_nodes, graph.edge_index.size(1), graph.num_features) == (
            nodes,
            edges,
            features,
        )
        assert graph.train_mask.shape == (nodes, 10)  # ten predefined splits


def test_offline_without_files_a_download_only_entry_fails_with_the_named_error(
    make_cfg, tmp_path, monkeypatch
):
    for var in ("https_proxy", "http_proxy", "HTTPS_PROXY", "HTTP_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # no download can succeed
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    cfg = make_cfg("dataset=wikics", mirror=empty)
    with pytest.raises(DatasetUnavailableError, match=r"'WikiCS'.*WikiCS/raw.*data\.json"):
        load_dataset(cfg.dataset.loader, tmp_path / "data", cfg.paths.data_mirror)


def test_zinc_files_are_staged_where_pyg_reads_them_and_no_download_runs(
    make_cfg, tmp_path, monkeypatch
):
    from torch_geometric.datasets import ZINC

    mirror = tmp_path / "mirror"
    (mirror / "ZINC" / "raw").mkdir(parents=True)
    for f in ZINC.raw_file_names.fget(None):
        (mirror / "ZINC" / "raw" / f).write_text("stand-in")

    class Reached(Exception):
        pass

    def process(self):
        missing = [p for p in self.raw_paths if not Path(p).is_file()]
        raise Reached(f"process reached, missing raw files: {missing}")

    def download(self):
        raise AssertionError("download() ran: it deletes the staged raw folder")

    monkeypatch.setattr(ZINC, "process", process)
    monkeypatch.setattr(ZINC, "download", download)
    cfg = make_cfg("dataset=zinc", mirror=mirror)
    with pytest.raises(Reached, match=r"missing raw files: \[\]"):
        load_dataset(cfg.dataset.loader, tmp_path / "data", cfg.paths.data_mirror)
    assert sorted(p.name for p in (tmp_path / "data" / "ZINC" / "raw").iterdir()) == sorted(
        ZINC.raw_file_names.fget(None)
    )


def test_ogb_entries_say_how_to_install_ogb_when_it_is_missing(make_cfg, tmp_path):
    import importlib.util

    if importlib.util.find_spec("ogb") is not None:
        pytest.skip("ogb is installed here")
    cfg = make_cfg("dataset=ogbn_arxiv")
    with pytest.raises(ImportError, match=r"pip install graphnetz\[ogb\]"):
        load_dataset(cfg.dataset.loader, tmp_path, None)


# ------------------------------------------------------------------ availability column
def test_availability_says_generated_mirror_or_download(mirror, tmp_path):
    entries = {e.config: e for e in catalogue()}
    assert str(offline_availability(entries["tsp"], tmp_path, None)) == "yes (generated)"
    assert str(offline_availability(entries["mutag"], tmp_path, mirror)) == "yes (mirror)"
    assert str(offline_availability(entries["mutag"], tmp_path, None)) == "no (download)"
    raw = tmp_path / "TUDataset" / "MUTAG" / "raw"
    raw.mkdir(parents=True)
    for f in (mirror / "TUDataset" / "MUTAG" / "raw").iterdir():
        (raw / f.name).write_bytes(f.read_bytes())
    assert str(offline_availability(entries["mutag"], tmp_path, None)) == "yes (data dir)"


def test_a_downloaded_network_archive_in_the_data_dir_counts_as_available(tmp_path):
    entry = {e.config: e for e in catalogue()}["facebook_friends"]  # download only
    assert str(offline_availability(entry, tmp_path, None)) == "no (download)"
    archive = tmp_path / "networks" / "netzschleuder" / "facebook_friends"
    archive.mkdir(parents=True)
    (archive / "facebook_friends.csv.zip").write_bytes(b"as the loader keeps it")
    assert str(offline_availability(entry, tmp_path, None)) == "yes (data dir)"


def test_a_seeded_loader_that_reads_files_is_not_called_generated(mirror, tmp_path):
    # hyperspheres_10_10_0 draws its edges from a seed but reads the released points
    entry = {e.config: e for e in catalogue()}["hyperspheres_10_10_0"]
    assert str(offline_availability(entry, tmp_path, None)) == "no (mirror only)"
    assert str(offline_availability(entry, tmp_path, mirror)) == "yes (mirror)"


@pytest.mark.parametrize("config", ["humloc", "pcg", "dblp_coauthorship"])
def test_an_entry_with_no_download_path_says_mirror_only_when_its_files_are_absent(
    mirror, tmp_path, config
):
    # MLGNC publishes its data in a GitHub repository only: the loaders cannot fetch it
    entry = {e.config: e for e in catalogue()}[config]
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    assert str(offline_availability(entry, tmp_path, empty)) == "no (mirror only)"
    assert str(offline_availability(entry, tmp_path, mirror)) == "yes (mirror)"


def test_list_datasets_shows_mirror_only_for_mlgnc_and_download_for_the_rest(capsys, tmp_path):
    from graphnetz.cli.list import main as list_main

    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    list_main(
        ["datasets", "--category", "multilabel", "--mirror", str(empty)]
        + ["--data-dir", str(tmp_path / "data")]
    )
    rows = {line.split()[2]: line for line in capsys.readouterr().out.splitlines()[1:-1]}
    assert rows["humloc"].endswith("no (mirror only)")
    assert rows["yelp"].endswith("no (download)")  # torch_geometric fetches Yelp itself


def test_dblp_coauthorship_has_the_edge_list_pairs_as_networkx_counts_them(
    make_cfg, mirror, data_dir
):
    import networkx as nx
    import pandas as pd

    cfg = make_cfg("dataset=dblp_coauthorship", mirror=mirror)
    data = load_dataset(cfg.dataset.loader, data_dir, cfg.paths.data_mirror)
    pairs = pd.read_csv(mirror / "MLGNC/dblp/dblp.edgelist", sep="\t", header=None)
    graph = nx.Graph(pairs.to_numpy().tolist())
    graph.remove_edges_from(nx.selfloop_edges(graph))
    assert data.num_nodes == 28_702 == graph.number_of_nodes()
    assert data.edge_index.size(1) == 2 * graph.number_of_edges()


def test_folders_in_the_mirror_are_staged_file_by_file(tmp_path):
    mirror = tmp_path / "mirror"
    for path in ("ModelNet/raw/bed/train/a.off", "ModelNet/raw/bed/test/b.off"):
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_text("OFF")
    files = pyg._entries_as_files(mirror, "ModelNet/raw", ["bed", "chair"])
    assert files == ["bed/test/b.off", "bed/train/a.off", "chair"]  # chair: absent, kept


def test_list_datasets_filters_by_task_and_shows_the_offline_column(capsys, mirror, tmp_path):
    from graphnetz.cli.list import main as list_main

    list_main(
        ["list", "datasets", "--category", "biology", "--task", "graph_cls"]
        + ["--mirror", str(mirror), "--data-dir", str(tmp_path)]
    )
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[2]: line for line in lines[1:-1]}
    assert {"mutag", "proteins", "enzymes"} <= set(rows)
    assert all(line.split()[1] == "graph_cls*" for line in rows.values())
    assert rows["mutag"].endswith("yes (mirror)")


def test_list_datasets_refuses_an_unknown_task_naming_the_valid_ones(capsys):
    from graphnetz.cli.list import main as list_main

    with pytest.raises(SystemExit):
        list_main(["list", "datasets", "--task", "link_prediction"])
    assert "unknown task type 'link_prediction'; valid: ['node_cls'" in capsys.readouterr().err
