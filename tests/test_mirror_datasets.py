"""FB15k-237, PROTEINS and ENZYMES load from the data mirror the way a user points at it
(``paths.data_mirror=...``), with the sizes their papers publish.

Published sizes: FB15k-237 (Toutanova & Chen, 2015) has 14 541 entities, 237 relations and
272 115 / 17 535 / 20 466 train / valid / test triples. PROTEINS (Borgwardt et al., 2005)
has 1 113 graphs, 663 enzymes and 450 non-enzymes; ENZYMES (Schomburg et al., 2004) has
600 graphs, 100 in each of the 6 EC top-level classes. Under CI=true a missing mirror
fails these tests instead of skipping them (the ``mirror`` fixture).
"""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from conftest import mirror_path

from graphnetz.data.loading import load_dataset


def load(make_cfg, mirror, dataset: str):
    cfg = make_cfg(f"dataset={dataset}", mirror=mirror)
    assert cfg.paths.data_mirror == str(mirror)
    return load_dataset(cfg.dataset.loader, cfg.paths.data_dir, cfg.paths.data_mirror)


pytestmark = pytest.mark.usefixtures("one_thread")


def test_fb15k_237_has_its_published_entities_relations_and_triples(make_cfg, mirror):
    data = load(make_cfg, mirror, "fb15k_237")
    assert data.num_nodes == 14_541
    assert data.num_relations == 237
    assert int(data.edge_type.unique().numel()) == 237
    sizes = [int(data[f"{s}_mask"].sum()) for s in ("train", "val", "test")]
    assert sizes == [272_115, 17_535, 20_466]
    assert data.edge_index.size(1) == sum(sizes)
    # every triple belongs to exactly one split
    masks = torch.stack([data.train_mask, data.val_mask, data.test_mask])
    assert (masks.sum(0) == 1).all()


def test_proteins_has_1113_graphs_663_of_them_enzymes(make_cfg, mirror):
    graphs = load(make_cfg, mirror, "proteins")
    assert len(graphs) == 1_113
    assert sorted(Counter(int(g.y) for g in graphs).values()) == [450, 663]


def test_enzymes_has_600_graphs_100_in_each_of_six_classes(make_cfg, mirror):
    graphs = load(make_cfg, mirror, "enzymes")
    assert len(graphs) == 600
    assert Counter(int(g.y) for g in graphs) == {c: 100 for c in range(6)}


@pytest.mark.parametrize("dataset", ["fb15k_237", "proteins", "enzymes"])
def test_the_mirror_is_only_read(make_cfg, mirror, dataset, tmp_path):
    def snapshot():
        return {str(p): p.stat().st_mtime_ns for p in mirror.rglob("*") if p.is_file()}

    before = snapshot()
    cfg = make_cfg(f"dataset={dataset}", mirror=mirror)
    load_dataset(cfg.dataset.loader, tmp_path / "fresh", cfg.paths.data_mirror)
    assert snapshot() == before
    assert any((tmp_path / "fresh").rglob("processed"))  # processed into our own folder


def test_a_missing_mirror_fails_under_ci_and_skips_elsewhere(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(tmp_path / "gone"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="gone"):
        mirror_path()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="gone"):
        mirror_path()
