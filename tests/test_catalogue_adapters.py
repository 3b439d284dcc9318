"""The adapters of download-only datasets, on small hand-built stand-ins of the objects the
torch_geometric classes return (their attributes as those classes document them), so the
conversion each config names is exercised without the data."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data, HeteroData

from graphnetz.data import pyg_adapt
from graphnetz.tasks import task_class


def path_graph(n: int, features: int = 2, **extra) -> Data:
    src = torch.arange(n - 1)
    edge_index = torch.cat([torch.stack([src, src + 1]), torch.stack([src + 1, src])], 1)
    return Data(x=torch.rand(n, features), edge_index=edge_index, num_nodes=n, **extra)


def test_wikics_test_mask_is_repeated_for_each_of_its_splits():
    n, k = 6, 20
    graph = path_graph(n)
    graph.train_mask = torch.zeros(n, k, dtype=torch.bool)
    graph.train_mask[0] = True
    graph.val_mask = torch.zeros(n, k, dtype=torch.bool)
    graph.val_mask[1] = True
    graph.test_mask = torch.tensor([False, False, True, True, False, False])
    graph.stopping_mask = torch.zeros(n, k, dtype=torch.bool)
    graph.y = torch.tensor([0, 1, 0, 1, 0, 1])
    data = pyg_adapt.wikics_splits([graph])
    assert data.test_mask.shape == (n, k)
    assert bool((data.test_mask == graph.test_mask.view(-1, 1)).all())
    assert "stopping_mask" not in data
    task_class("node_cls").prepare(data, seed=23)  # column 3 of 20


def test_movielens_is_one_bipartite_graph_with_all_ratings():
    hetero = HeteroData()
    hetero["user"].x = torch.ones(3, 4)
    hetero["movie"].x = torch.full((2, 5), 2.0)
    store = hetero["user", "rates", "movie"]
    store.edge_index = torch.tensor([[0, 1], [0, 1]])
    store.edge_label_index = torch.tensor([[2], [0]])
    data = pyg_adapt.movielens_ratings([hetero])
    assert data.num_nodes == 5 and data.x.shape == (5, 9)
    assert data.x[:3, :4].eq(1).all() and data.x[:3, 4:].eq(0).all()
    assert data.x[3:, :4].eq(0).all() and data.x[3:, 4:].eq(2).all()
    edges = {tuple(e) for e in data.edge_index.t().tolist()}
    assert edges == {(0, 3), (3, 0), (1, 4), (4, 1), (2, 3), (3, 2)}


def test_disjoint_union_keeps_graphs_apart_and_marks_their_split():
    parts = {
        "train": [path_graph(3, y=torch.zeros(3, 2)), path_graph(2, y=torch.zeros(2, 2))],
        "val": [path_graph(2, y=torch.ones(2, 2))],
        "test": [path_graph(4, y=torch.ones(4, 2))],
    }
    data = pyg_adapt.disjoint_union(parts)
    assert data.num_nodes == 11
    assert data.edge_index.size(1) == 2 * (2 + 1 + 1 + 3)
    assert data.train_mask.sum() == 5 and data.val_mask.sum() == 2 and data.test_mask.sum() == 4
    # no edge crosses from one graph to another: node blocks 0-2, 3-4, 5-6, 7-10
    block = torch.tensor([0] * 3 + [1] * 2 + [2] * 2 + [3] * 4)
    assert bool((block[data.edge_index[0]] == block[data.edge_index[1]]).all())
    task_class("ml_node_cls").prepare(data, seed=0)
    with pytest.raises(ValueError, match="the val and test split of the link split has no edge"):
        task_class("link_pred").prepare(data, seed=0)  # 7 edges: none can be held out
    larger = pyg_adapt.disjoint_union(
        {split: [path_graph(40, y=torch.zeros(40, 2))] for split in ("train", "val", "test")}
    )
    task_class("link_pred").prepare(larger, seed=0)


def test_elliptic_validation_is_the_tail_of_the_labelled_training_nodes():
    n = 20
    graph = path_graph(n, y=torch.tensor([0, 1, 2] * 6 + [0, 1]))
    graph.train_mask = (torch.arange(n) < 15) & (graph.y != 2)
    graph.test_mask = (torch.arange(n) >= 15) & (graph.y != 2)
    data = pyg_adapt.elliptic_validation([graph], val_fraction=0.2)
    train = graph.train_mask.nonzero().view(-1).tolist()  # 10 labelled training nodes
    assert data.val_mask.nonzero().view(-1).tolist() == train[-2:]
    assert not bool((data.train_mask & data.val_mask).any())
    assert int(data.train_mask.sum()) == 8


def test_degree_features_of_featureless_graphs():
    graph = Data(edge_index=torch.tensor([[0, 0, 1, 2], [1, 2, 0, 0]]), num_nodes=4, y=1)
    parts = pyg_adapt.degree_features({s: [graph] for s in ("train", "val", "test")})
    x = parts["train"][0].x
    assert torch.allclose(x[:, 1], torch.log1p(torch.tensor([2.0, 1, 1, 0])))
    assert x[:, 0].eq(1).all()


def test_mesh_graphs_take_face_edges_and_coordinates_and_carve_validation():
    tetra = Data(
        pos=torch.rand(4, 3), face=torch.tensor([[0, 0, 0, 1], [1, 1, 2, 2], [2, 3, 3, 3]])
    )
    tetra.y = torch.tensor([0])
    parts = pyg_adapt.mesh_graphs({"train": [tetra] * 10, "test": [tetra] * 3}, 0.2)
    assert [len(parts[s]) for s in ("train", "val", "test")] == [8, 2, 3]
    graph = parts["test"][0]
    assert torch.equal(graph.x, tetra.pos) and graph.edge_index.size(1) == 12  # K4, both ways


def test_superpixels_concatenate_intensity_and_position():
    image = path_graph(5, features=1, pos=torch.rand(5, 2), y=torch.tensor([3]))
    graphs = pyg_adapt.superpixels({"train": [image] * 4, "test": [image]}, num_graphs=3)
    assert len(graphs) == 3 and graphs[0].x.shape == (5, 3)
    parts = pyg_adapt.superpixels({"train": [image] * 10, "test": [image]}, val_fraction=0.1)
    assert [len(parts[s]) for s in ("train", "val", "test")] == [9, 1, 1]


def test_point_cloud_parts_become_one_knn_graph_with_split_masks():
    shape = Data(pos=torch.rand(10, 3), x=torch.rand(10, 3), y=torch.arange(10) % 4)
    data = pyg_adapt.point_cloud_parts({s: [shape] * 3 for s in ("train", "val", "test")}, 3, 2)
    assert data.num_nodes == 60 and data.x.shape == (60, 6)
    assert int(data.train_mask.sum()) == 20
    task_class("node_cls").prepare(data, seed=0)


def test_qm9_target_keeps_one_column_and_checks_it():
    molecule = path_graph(3, features=11, y=torch.arange(19.0).view(1, 19))
    graphs = pyg_adapt.qm9_target([molecule], target=7)
    assert graphs[0].y.tolist() == [7.0]
    with pytest.raises(ValueError, match="target must be a QM9 target column 0..18, got 19"):
        pyg_adapt.qm9_target([molecule], target=19)


def test_zinc_atoms_are_one_hot_over_28_types():
    molecule = Data(x=torch.tensor([[0], [27]]), edge_index=torch.tensor([[0, 1], [1, 0]]))
    molecule.y = torch.tensor([1.5])
    parts = pyg_adapt.zinc_atoms({s: [molecule] for s in ("train", "val", "test")})
    x = parts["val"][0].x
    assert x.shape == (2, 28) and x[0, 0] == 1 and x[1, 27] == 1 and x.sum() == 2
