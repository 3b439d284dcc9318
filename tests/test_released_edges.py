"""Dataset statistics under both edge conventions: the simple graph and the file as released."""

import networkx as nx
import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphnetz.analysis import __main__ as analysis_cli
from graphnetz.analysis.statistics import dataset_statistics
from graphnetz.data.multilabel_released import released_edges


def _toy():
    rows = np.array([[0, 1], [1, 2], [2, 0], [0, 1], [3, 3], [2, 3]])  # a repeat, a loop
    y = torch.tensor([[1, 0], [1, 0], [1, 1], [0, 1], [0, 1]], dtype=torch.float)  # 4 isolated
    simple = torch.tensor([[0, 1, 1, 2, 2, 0, 2, 3], [1, 0, 2, 1, 0, 2, 3, 2]])
    return Data(edge_index=simple, y=y, num_nodes=5), rows


def test_as_released_counts_every_row_and_averages_clustering_over_listed_nodes():
    data, rows = _toy()
    simple = dataset_statistics(data, "toy")
    released = dataset_statistics(data, "toy", released_edges=rows)
    assert simple["edges"] == 4 and released["edges"] == 6
    graph = nx.Graph()
    graph.add_nodes_from(range(5))
    graph.add_edges_from(map(tuple, rows))
    clustering = nx.clustering(graph)
    assert simple["avg_clustering"] == pytest.approx(np.mean(list(clustering.values())))
    listed = [0, 1, 2, 3]  # node 4 is in no row
    assert released["avg_clustering"] == pytest.approx(np.mean([clustering[i] for i in listed]))
    jaccard = {(0, 1): 1.0, (1, 2): 0.5, (2, 0): 0.5, (3, 3): 1.0, (2, 3): 0.5}
    expected = np.mean([jaccard[tuple(r)] for r in rows])
    assert released["label_homophily"] == pytest.approx(expected)
    assert simple["label_homophily"] == pytest.approx(np.mean([1.0, 0.5, 0.5, 0.5]))


def test_unknown_dataset_names_the_ones_with_a_released_edge_list(tmp_path):
    with pytest.raises(ValueError, match="humloc"):
        released_edges("cora", tmp_path)


@pytest.mark.parametrize(
    ("name", "rows", "homophily", "clustering", "simple_edges", "simple_homophily"),
    [
        ("humloc", 18496, 0.420, 0.130, 15978, 0.398),
        ("eukloc", 13818, 0.459, 0.144, 11321, 0.405),
    ],
)
def test_go_datasets_under_both_conventions(
    mirror, data_dir, tmp_path, name, rows, homophily, clustering, simple_edges, simple_homophily
):
    common = [f"dataset={name}", f"paths.data_mirror={mirror}", f"paths.data_dir={data_dir}"]
    released = analysis_cli.main([*common, "edges=as_released", f"out={tmp_path / 'r'}"])
    simple = analysis_cli.main([*common, f"out={tmp_path / 's'}"])
    assert released["edges"] == rows
    assert released["label_homophily"] == pytest.approx(homophily, abs=5e-4)
    assert released["avg_clustering"] == pytest.approx(clustering, abs=5e-4)
    assert simple["edges"] == simple_edges
    assert simple["label_homophily"] == pytest.approx(simple_homophily, abs=5e-4)
    assert "as_released" in (tmp_path / "r" / "statistics.csv").read_text()


def test_bad_convention_names_the_choices(mirror):
    with pytest.raises(SystemExit, match="as_released"):
        analysis_cli.main(["dataset=humloc", "edges=raw"])
