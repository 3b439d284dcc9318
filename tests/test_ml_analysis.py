"""Multi-label homophily, CCNS and the statistics row against hand-computed values."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from torch_geometric.data import Data

from graphnetz.analysis import (
    analyse_dataset,
    dataset_statistics,
    label_homophily,
    multilabel_ccns,
)

# The 5-node graph used below. Labels (C = 3):
#   ℓ(0) = {0}, ℓ(1) = {0, 1}, ℓ(2) = {1}, ℓ(3) = {1, 2}, ℓ(4) = {2}
# Undirected edges: 0-1, 1-2, 2-3, 3-4, 0-2.
Y5 = torch.tensor([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1]], dtype=torch.float)
PAIRS5 = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2)]


def both_directions(pairs) -> torch.Tensor:
    src = [i for i, j in pairs] + [j for i, j in pairs]
    dst = [j for i, j in pairs] + [i for i, j in pairs]
    return torch.tensor([src, dst])


def test_label_homophily_five_node_graph():
    # Jaccard per edge: 0-1: |{0}|/|{0,1}| = 1/2; 1-2: 1/2; 2-3: 1/2; 3-4: 1/2; 0-2: 0/2 = 0
    # h = (4 · 1/2 + 0) / 5 = 0.4 (each edge appears twice in edge_index; the mean is the same)
    assert label_homophily(both_directions(PAIRS5), Y5) == pytest.approx(0.4)


def test_homophily_of_two_empty_label_sets_is_one_by_default():
    y = torch.tensor([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    ei = both_directions([(0, 1), (1, 2)])
    # edge 0-1: Jaccard(∅, ∅) = 1 by convention; edge 1-2: Jaccard(∅, {0}) = 0
    assert label_homophily(ei, y) == pytest.approx(0.5)
    assert label_homophily(ei, y, empty_value=0.0) == pytest.approx(0.0)
    assert label_homophily(ei, y, empty_value=float("nan")) == pytest.approx(0.0)  # 0-1 dropped


def test_ccns_five_node_graph_by_hand():
    s = multilabel_ccns(both_directions(PAIRS5), Y5)
    # Neighbour label counts d_i = Σ_{j∈N(i)} y_j:
    #   d0 = y1 + y2 = [1,2,0]; d1 = y0 + y2 = [1,1,0]; d2 = y0 + y1 + y3 = [2,2,1];
    #   d3 = y2 + y4 = [0,1,1]; d4 = y3 = [0,1,1]
    # cos(0,1) = 3/√10; cos(0,3) = cos(0,4) = 2/√10; cos(1,2) = 4/(3√2); cos(1,3) = cos(1,4) = 1/2;
    # cos(2,3) = 3/(3√2) = 1/√2.  |ℓ| = (1, 2, 1, 2, 1); V_0 = {0,1}, V_1 = {1,2,3}, V_2 = {3,4}.
    # s(0,0) = 1/4 · 2 · cos(0,1)/(1·2) = 3/(4√10)
    assert s[0, 0] == pytest.approx(3 / (4 * math.sqrt(10)))
    # s(0,2) = 1/4 · [cos(0,3)/2 + cos(0,4)/1 + cos(1,3)/4 + cos(1,4)/2]
    #        = 1/4 · [1/√10 + 2/√10 + 1/8 + 1/4] = (3/√10 + 3/8)/4
    assert s[0, 2] == pytest.approx((3 / math.sqrt(10) + 3 / 8) / 4)
    # s(1,1) = 1/9 · 2 · [cos(1,2)/2 + cos(1,3)/4 + cos(2,3)/2] = 1/9 · [4/(3√2) + 1/4 + 1/√2]
    assert s[1, 1] == pytest.approx((4 / (3 * math.sqrt(2)) + 1 / 4 + 1 / math.sqrt(2)) / 9)
    np.testing.assert_allclose(s, s.T)


def naive_ccns(edge_index: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The CCNS definition written as explicit loops (independent reference)."""
    n, c = y.shape
    d = np.zeros((n, c))
    for src, dst in edge_index.T:
        d[dst] += y[src]
    out = np.zeros((c, c))
    for a in range(c):
        for b in range(c):
            va, vb = np.flatnonzero(y[:, a]), np.flatnonzero(y[:, b])
            total = 0.0
            for i in va:
                for j in vb:
                    if i == j:
                        continue
                    ni, nj = np.linalg.norm(d[i]), np.linalg.norm(d[j])
                    cos = d[i] @ d[j] / (ni * nj) if ni > 0 and nj > 0 else 0.0
                    total += cos / (y[i].sum() * y[j].sum())
            out[a, b] = total / (va.size * vb.size)
    return out


def test_ccns_matches_naive_double_loop_on_random_graph():
    rng = np.random.default_rng(7)
    n, c = 60, 5
    y = (rng.random((n, c)) < 0.3).astype(float)
    y[:, 0] = np.maximum(y[:, 0], rng.random(n) < 0.2)  # a class present for sure
    y[0] = 0  # one unlabelled node (neighbour of others, in no V_c)
    pairs = {tuple(sorted(p)) for p in rng.integers(n, size=(150, 2)) if p[0] != p[1]}
    ei = both_directions(sorted(pairs)).numpy()
    np.testing.assert_allclose(multilabel_ccns(ei, y), naive_ccns(ei, y), rtol=1e-10)


def test_ccns_class_without_nodes_is_nan():
    y = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    s = multilabel_ccns(both_directions([(0, 1)]), y)
    assert np.isnan(s[1]).all() and np.isnan(s[:, 1]).all()


def test_ccns_two_nodes_value():
    y = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    # d0 = d1 = [1, 0] ⇒ cos = 1; s(0,0) = (cos(0,1) + cos(1,0)) / (2·2) = 0.5
    assert multilabel_ccns(both_directions([(0, 1)]), y)[0, 0] == pytest.approx(0.5)


def test_rejects_non_binary_labels():
    with pytest.raises(ValueError, match="only 0 and 1"):
        label_homophily(both_directions([(0, 1)]), torch.tensor([[0.5], [1.0]]))


def test_a_negative_node_index_is_named():
    with pytest.raises(ValueError, match=r"refers to node -1 but y has rows 0..4"):
        label_homophily(torch.tensor([[0, -1], [1, 0]]), Y5)


def test_simple_homophily_counts_each_unordered_pair_once():
    """Self-loops, repeated and one-way edges do not weigh in the simple convention: the
    graph of PAIRS5 given with extras has the homophily of PAIRS5 itself."""
    clean = dataset_statistics(Data(edge_index=both_directions(PAIRS5), y=Y5), "clean")
    messy = torch.cat(
        [both_directions(PAIRS5), torch.tensor([[0, 1, 1, 3], [0, 2, 2, 4]])], dim=1
    )  # a self-loop, a repeated one-way edge, a one-way duplicate of (3, 4)
    row = dataset_statistics(Data(edge_index=messy, y=Y5), "messy")
    assert row["edges"] == clean["edges"] == 5
    assert row["label_homophily"] == pytest.approx(clean["label_homophily"], abs=1e-15)
    assert clean["label_homophily"] == pytest.approx(label_homophily(both_directions(PAIRS5), Y5))


def test_statistics_row_against_networkx():
    rng = np.random.default_rng(3)
    g = nx.gnm_random_graph(80, 240, seed=3)
    y = (rng.random((80, 4)) < 0.3).astype(np.float32)
    ei = both_directions(list(g.edges()))
    data = Data(x=torch.zeros(80, 7), edge_index=ei, y=torch.from_numpy(y))
    row = dataset_statistics(data, "toy")
    per_node = y.sum(1)
    assert row["nodes"] == 80 and row["edges"] == 240 and row["features"] == 7
    assert row["classes"] == 4
    assert row["avg_clustering"] == pytest.approx(nx.average_clustering(g))
    assert row["labels_mean"] == pytest.approx(per_node.mean())
    assert row["labels_max"] == per_node.max()
    assert row["labels_p75"] == pytest.approx(np.percentile(per_node, 75))
    assert row["unlabelled_fraction"] == pytest.approx((per_node == 0).mean())


def test_analyse_dataset_writes_table_and_figures(tmp_path):
    data = Data(x=torch.zeros(5, 2), edge_index=both_directions(PAIRS5), y=Y5)
    row = analyse_dataset(data, "five", tmp_path)
    assert row["label_homophily"] == pytest.approx(0.4)
    for name in (
        "statistics.csv",
        "statistics.md",
        "ccns.csv",
        "label_counts.png",
        "label_counts.pdf",
        "ccns.png",
        "ccns.pdf",
    ):
        assert (tmp_path / name).stat().st_size > 0, name
    assert "| five | simple | 5 | 5 | 2 |" in (tmp_path / "statistics.md").read_text()


def test_the_written_ccns_is_that_of_the_simple_graph_however_edges_are_stored(tmp_path):
    one_way = torch.tensor(PAIRS5 + [(1, 2), (3, 3)]).t()  # i < j only, a repeat, a loop
    analyse_dataset(Data(edge_index=one_way, y=Y5), "stored", tmp_path / "a")
    written = np.loadtxt(tmp_path / "a" / "ccns.csv", delimiter=",")
    expected = multilabel_ccns(both_directions(PAIRS5), Y5)
    np.testing.assert_allclose(written, expected, rtol=1e-5)


@pytest.mark.parametrize("factor", [0, 10**9])  # sparse products only / dense ones always
def test_local_clustering_is_networkx_on_either_product(monkeypatch, factor):
    from graphnetz.analysis import statistics

    monkeypatch.setattr(statistics, "DENSE_WEDGE_FACTOR", factor)
    g = nx.gnp_random_graph(150, 0.3, seed=4)
    g.add_nodes_from(range(150, 153))  # isolated nodes count as 0
    adj = statistics.simple_adjacency(both_directions(list(g.edges())), 153)
    expected = nx.clustering(g)
    got = statistics.local_clustering(adj, block_rows=64)
    assert got.tolist() == pytest.approx([expected[i] for i in range(153)], abs=1e-12)


def test_single_label_data_is_refused_before_anything_is_written(tmp_path):
    data = Data(edge_index=both_directions(PAIRS5), y=torch.tensor([0, 1, 0, 1, 1]))
    with pytest.raises(ValueError, match=r"'five' is not multi-label.*shape \[5\]"):
        analyse_dataset(data, "five", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_analysis_cli_needs_a_multilabel_dataset(tmp_path):
    from graphnetz.analysis.__main__ import main

    with pytest.raises(SystemExit, match=r"dataset=<name>.*multi-label datasets: \[.*'pcg'"):
        main([f"out={tmp_path / 'a'}"])
    with pytest.raises(SystemExit, match=r"'cora' is not multi-label.*node_cls.*'pcg'"):
        main(["dataset=cora", f"out={tmp_path / 'b'}"])
    assert not any(tmp_path.iterdir())


def test_homophily_counted_in_edge_blocks_equals_one_block(monkeypatch):
    from graphnetz.analysis import homophily

    rng = np.random.default_rng(3)
    y = (rng.random((60, 7)) < 0.3).astype(np.int64)
    edge_index = rng.integers(0, 60, size=(2, 500))
    whole = homophily.edge_jaccard(edge_index, y)
    monkeypatch.setattr(homophily, "EDGE_BLOCK", 37)
    assert np.array_equal(homophily.edge_jaccard(edge_index, y), whole)


def test_an_unknown_dataset_is_refused_naming_the_multilabel_datasets(tmp_path):
    from graphnetz.analysis.__main__ import main

    with pytest.raises(SystemExit) as refused:
        main(["dataset=humlok", f"out={tmp_path / 'a'}"])
    message = str(refused.value)
    assert message.startswith("unknown dataset 'humlok'; multi-label datasets: [")
    assert "'humloc'" in message and "'cora'" not in message  # only the valid choices
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("overrides", "folder"),
    [
        (["dataset=humloc"], "humloc"),  # a fixed dataset keeps its name
        (["dataset=ml_synthetic"], "ml_synthetic_seed=0"),
        (["dataset=ml_synthetic", "seed=3"], "ml_synthetic_seed=3"),
        (
            ["dataset=ml_synthetic", "dataset.loader.b=0.1", "dataset.loader.alpha=8"],
            "ml_synthetic_alpha=8_b=0.1_seed=0",
        ),
    ],
)
def test_the_default_folder_names_the_generator_parameters(overrides, folder):
    from graphnetz.analysis.__main__ import compose_config, default_folder, find_conf_dir

    assert default_folder(compose_config(overrides), find_conf_dir()) == folder


def test_analyses_of_two_generator_settings_do_not_overwrite_each_other(tmp_path):
    from graphnetz.analysis.__main__ import main

    small = ["dataset=ml_synthetic", "dataset.loader.num_nodes=60", f"paths.output_dir={tmp_path}"]
    main([*small, "dataset.loader.alpha=2"])
    main([*small, "dataset.loader.alpha=8"])
    folders = sorted(p.name for p in (tmp_path / "analysis").iterdir())
    assert folders == [
        "ml_synthetic_alpha=2_num_nodes=60_seed=0",
        "ml_synthetic_alpha=8_num_nodes=60_seed=0",
    ]
    written = OmegaConf.load(tmp_path / "analysis" / folders[1] / "loader.yaml")
    assert written.loader.alpha == 8 and written.loader.num_nodes == 60 and written.seed == 0
