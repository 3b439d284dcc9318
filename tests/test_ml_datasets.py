"""Multi-label loaders on the offline mirror: shapes of MANIFEST.md §3, the Data contract,
the mirror left untouched, and actionable errors when data is missing."""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import torch

from graphnetz.analysis import dataset_statistics
from graphnetz.analysis.__main__ import main as analysis_main
from graphnetz.data import multilabel
from graphnetz.data.mirror import DatasetUnavailableError

# name: (nodes, features, classes, mask shape suffix, train size of split 0) — MANIFEST.md §3
EXPECTED = {
    "pcg": (3233, 32, 15, (3,), 1939),
    "humloc": (3106, 32, 14, (), 1675),
    "eukloc": (7766, 32, 22, (), 4192),
    "blogcatalog": (10312, 10312, 39, (3,), 6187),
    "dblp": (28702, 5, 4, (3,), 17221),
}


def snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def loaded(mirror, tmp_path_factory):
    """Every MLGNC dataset loaded once from the mirror, with the mirror's state around it."""
    root = tmp_path_factory.mktemp("mldata")
    before = snapshot(mirror)
    data = {
        name: getattr(multilabel, f"load_{name}")(str(root), mirror=str(mirror))
        for name in EXPECTED
    }
    return {"root": root, "data": data, "before": before, "after": snapshot(mirror)}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loader_shapes_match_manifest(loaded, name):
    nodes, feats, classes, mask_suffix, n_train = EXPECTED[name]
    d = loaded["data"][name]
    assert tuple(d.x.shape) == (nodes, feats) and d.x.dtype == torch.float32
    assert tuple(d.y.shape) == (nodes, classes) and d.y.dtype == torch.float32
    assert set(d.y.unique().tolist()) <= {0.0, 1.0}
    for key in ("train_mask", "val_mask", "test_mask"):
        assert d[key].dtype == torch.bool and tuple(d[key].shape) == (nodes, *mask_suffix)
    train0 = d.train_mask if d.train_mask.dim() == 1 else d.train_mask[:, 0]
    assert int(train0.sum()) == n_train
    masks = torch.stack([d.train_mask, d.val_mask, d.test_mask])
    assert (masks.sum(0) <= 1).all()  # disjoint
    assert isinstance(d.feature_note, str) and d.feature_note


@pytest.mark.parametrize("name", list(EXPECTED))
def test_edges_are_undirected_simple(loaded, name):
    ei = loaded["data"][name].edge_index
    assert ei.dtype == torch.long and ei.dim() == 2 and ei.size(0) == 2
    n = loaded["data"][name].num_nodes
    key = ei[0] * n + ei[1]
    assert (ei[0] != ei[1]).all()
    assert key.unique().numel() == key.numel()
    assert torch.equal(key.sort().values, (ei[1] * n + ei[0]).sort().values)


def test_mirror_is_never_written(loaded):
    assert loaded["after"] == loaded["before"]
    processed = loaded["root"] / "MLGNC" / "processed"
    seeded = {"pcg", "blogcatalog", "dblp"}  # their splits may depend on split_seed
    names = [f"{n}-split0.pt" if n in seeded else f"{n}.pt" for n in EXPECTED]
    assert set(names) <= {p.name for p in processed.glob("*.pt")}  # later tests add seeds


def test_overlapping_shipped_dblp_splits_are_replaced(loaded, mirror):
    # independent check of the raw files: split_0 train and val share nodes
    raw = torch.load(mirror / "MLGNC/dblp/dblp_0.6/split_0.pt", weights_only=True)
    assert np.intersect1d(raw["train_mask"].numpy(), raw["val_mask"].numpy()).size > 0
    d = loaded["data"]["dblp"]
    assert "overlap" in d.split_note
    assert (d.train_mask.int() + d.val_mask.int() + d.test_mask.int() == 1).all()
    assert "shipped" in loaded["data"]["pcg"].split_note


def test_humloc_edges_match_networkx_reading_of_raw_csv(loaded, mirror):
    raw = pd.read_csv(mirror / "MLGNC/HumanGo/edge_list.csv", usecols=["prot1", "prot2"])
    g = nx.Graph()
    g.add_edges_from(zip(raw.prot1.astype(int), raw.prot2.astype(int), strict=True))
    g.remove_edges_from(nx.selfloop_edges(g))
    assert loaded["data"]["humloc"].edge_index.size(1) == 2 * g.number_of_edges()


def test_blogcatalog_features_are_a_sparse_identity(loaded):
    x = loaded["data"]["blogcatalog"].x
    assert x.is_sparse and x._nnz() == 10312
    assert torch.equal(x.indices()[0], x.indices()[1])


def test_cached_load_equals_first_load(loaded, mirror):
    again = multilabel.load_pcg(str(loaded["root"]), mirror=str(mirror))
    first = loaded["data"]["pcg"]
    for key in ("x", "edge_index", "y", "train_mask"):
        assert torch.equal(again[key], first[key])
    assert again.feature_note == first.feature_note


def test_dblp_split_seed_gives_its_splits_whatever_the_data_dir_holds(loaded, mirror):
    """DBLP's shipped splits overlap, so its splits come from split_seed: a data dir that
    holds the graph built with another split_seed must not answer for this one."""
    root = str(loaded["root"])  # holds DBLP built with split_seed=0
    other = multilabel.load_dblp(root, mirror=str(mirror), split_seed=7)
    expected = multilabel.random_split_masks(28702, 7, num_splits=3)
    for key, mask in expected.items():
        assert torch.equal(other[key], mask)
    assert "seeds 7..9" in other.split_note
    again = multilabel.load_dblp(root, mirror=str(mirror), split_seed=0)
    assert torch.equal(again.train_mask, loaded["data"]["dblp"].train_mask)


def test_a_changed_mirror_file_rebuilds_the_cached_graph(mirror, tmp_path):
    source = mirror / "MLGNC/pcg_removed_isolated_nodes"
    folder = tmp_path / "mirror/MLGNC/pcg_removed_isolated_nodes"
    folder.mkdir(parents=True)
    for f in ("features.csv", "edges_undir.csv"):
        os.symlink(source / f, folder / f)
    os.symlink(
        mirror / "MLGNC/pcg_removed_isolated_nodes_0.6", folder.parent / (folder.name + "_0.6")
    )
    labels = pd.read_csv(source / "labels.csv", header=None)
    labels.to_csv(folder / "labels.csv", header=False, index=False)
    root = str(tmp_path / "data")
    before = multilabel.load_pcg(root, mirror=str(tmp_path / "mirror"))
    assert before.y[0].sum() < labels.shape[1]
    labels.iloc[0] = 1  # the mirror's file is corrected
    labels.to_csv(folder / "labels.csv", header=False, index=False)
    after = multilabel.load_pcg(root, mirror=str(tmp_path / "mirror"))
    assert after.y[0].sum() == labels.shape[1]
    assert torch.equal(after.y[1:], before.y[1:])


def test_statistics_of_large_datasets(loaded):
    # BlogCatalog: 333,983 undirected edges (MLGNC paper, Table 1); DBLP clustering
    # cross-checked against networkx.
    blog = dataset_statistics(loaded["data"]["blogcatalog"], "blogcatalog")
    assert blog["edges"] == 333983 and blog["classes"] == 39
    assert 0.05 < blog["label_homophily"] < 0.2
    dblp = loaded["data"]["dblp"]
    row = dataset_statistics(dblp, "dblp")
    g = nx.Graph()
    g.add_nodes_from(range(dblp.num_nodes))
    g.add_edges_from(dblp.edge_index.t().tolist())
    assert row["edges"] == g.number_of_edges()
    assert row["avg_clustering"] == pytest.approx(nx.average_clustering(g), rel=1e-9)
    assert row["labels_mean"] == pytest.approx(1.18, abs=0.005)  # MANIFEST: 1.18 labels/node


def test_missing_dataset_error_names_dataset_paths_and_remedy(tmp_path):
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    with pytest.raises(DatasetUnavailableError) as err:
        multilabel.load_humloc(str(tmp_path / "data"), mirror=str(empty))
    msg = str(err.value)
    assert "'humloc'" in msg and str(empty / "MLGNC/HumanGo") in msg
    assert "paths.data_mirror" in msg and "features.csv" in msg


def test_missing_split_files_fall_back_to_seeded_random_splits(mirror, tmp_path):
    partial = tmp_path / "mirror"
    (partial / "MLGNC/pcg_removed_isolated_nodes").mkdir(parents=True)
    for f in ("features.csv", "labels.csv", "edges_undir.csv"):
        os.symlink(
            mirror / "MLGNC/pcg_removed_isolated_nodes" / f,
            partial / "MLGNC/pcg_removed_isolated_nodes" / f,
        )
    d = multilabel.load_pcg(str(tmp_path / "data"), mirror=str(partial))
    assert d.train_mask.shape == (3233, 3)
    assert d.train_mask.sum(0).tolist() == [round(0.6 * 3233)] * 3


def test_ogbn_proteins_without_ogb_names_the_extra(monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_ogb(name, *args, **kwargs):
        if name.startswith("ogb"):
            raise ImportError("No module named 'ogb'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ogb)
    with pytest.raises(ImportError, match=r"pip install graphnetz\[ogb\]"):
        multilabel.load_ogbn_proteins(str(tmp_path))


def test_yelp_offline_is_reported_as_unavailable(monkeypatch, tmp_path):
    import torch_geometric.datasets

    def offline(*args, **kwargs):
        raise OSError("network is unreachable")

    monkeypatch.setattr(torch_geometric.datasets, "Yelp", offline)
    with pytest.raises(DatasetUnavailableError, match="'yelp'.*Yelp/raw"):
        multilabel.load_yelp(str(tmp_path), mirror=None)


def test_analysis_cli_writes_statistics_and_figures(mirror, loaded, tmp_path, capsys):
    out = tmp_path / "out"
    row = analysis_main(
        [
            "dataset=humloc",
            f"paths.data_mirror={mirror}",
            f"paths.data_dir={loaded['root']}",
            f"out={out}",
        ]
    )
    assert row["nodes"] == 3106 and row["edges"] == loaded["data"]["humloc"].edge_index.size(1) // 2
    for name in (
        "statistics.csv",
        "statistics.md",
        "label_counts.png",
        "label_counts.pdf",
        "ccns.png",
        "ccns.pdf",
    ):
        assert (out / name).is_file(), name
    assert "| humloc | 3106 |" in capsys.readouterr().out
    assert np.loadtxt(out / "ccns.csv", delimiter=",").shape == (14, 14)
