"""Turn torch_geometric datasets into what a task type takes, one function per shape.

Node and link tasks take one graph (``Data``, masks for node tasks, ``[N, K]`` masks meaning
K predefined splits); graph tasks take a list of graphs (seeded split) or a
``{"train", "val", "test"}`` dict (canonical split). :func:`graphnetz.data.pyg.load_pyg_dataset`
calls the function its config names (``adapt: <name>``); each states its rule, so the
dataset config's ``features`` line can quote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch_geometric.data import Data
from torch_geometric.utils import degree, to_undirected

from graphnetz.data.combinatorial import knn_edges  # numpy k-NN: no torch-cluster needed

ADAPTERS = (
    "wikics_splits",
    "movielens_ratings",
    "disjoint_union",
    "elliptic_validation",
    "degree_features",
    "mesh_graphs",
    "superpixels",
    "point_cloud_parts",
    "qm9_target",
    "zinc_atoms",
)
SPLITS = ("train", "val", "test")


def _tail_validation(train: Sequence, fraction: float) -> tuple[list, list]:
    """Split a training list into (train, validation): the last ``fraction`` validates
    (fixed, so every seed sees the same canonical test set and the same validation set)."""
    if not 0 < fraction < 1:
        raise ValueError(f"val_fraction must be in (0, 1), got {fraction!r}")
    items = list(train)
    cut = len(items) - max(1, round(fraction * len(items)))
    return items[:cut], items[cut:]


def _with_validation(parts: Mapping[str, Any], fraction: float) -> dict[str, list]:
    """A train/test dict completed with validation graphs carved from the training part."""
    if "val" in parts:
        return {s: list(parts[s]) for s in SPLITS}
    train, val = _tail_validation(parts["train"], fraction)
    return {"train": train, "val": val, "test": list(parts["test"])}


def wikics_splits(dataset) -> Data:
    """WikiCS: 20 predefined train/val splits with one test set; the test mask is repeated
    per split so ``seed % 20`` picks split and test together (``[N, 20]`` masks)."""
    data = dataset[0].clone()
    k = data.train_mask.size(1)
    data.test_mask = data.test_mask.view(-1, 1).expand(-1, k).contiguous()
    del data.stopping_mask
    return data


def movielens_ratings(dataset) -> Data:
    """MovieLens-100k as one bipartite graph: users 0..942, movies after them, an edge per
    rating (u1.base and u1.test together; the link task splits them).
    x = [user features | 0] for users and [0 | movie genres] for movies."""
    hetero = dataset[0]
    users, movies = hetero["user"].x, hetero["movie"].x
    store = hetero["user", "rates", "movie"]
    pairs = torch.cat([store.edge_index, store.edge_label_index], dim=1)
    n_users = users.size(0)
    x = torch.cat(
        [
            F.pad(users, (0, movies.size(1))),
            F.pad(movies, (users.size(1), 0)),
        ]
    )
    edge_index = to_undirected(torch.stack([pairs[0], pairs[1] + n_users]))
    return Data(x=x, edge_index=edge_index, num_nodes=x.size(0), num_users=n_users)


def disjoint_union(parts: Mapping[str, Any]) -> Data:
    """The graphs of every split as one graph (no edges between them), with node masks
    marking each split's graphs: inductive splits as one transductive graph (PPI)."""
    graphs, masks = [], {s: [] for s in SPLITS}
    for split in SPLITS:
        for graph in parts[split]:
            graphs.append(graph)
            for s in SPLITS:
                masks[s].append(torch.full((graph.num_nodes,), s == split))
    offsets = torch.tensor([0] + [g.num_nodes for g in graphs]).cumsum(0)
    edge_index = torch.cat([g.edge_index + offsets[i] for i, g in enumerate(graphs)], dim=1)
    data = Data(
        x=torch.cat([g.x for g in graphs]).float(),
        y=torch.cat([g.y for g in graphs]),
        edge_index=edge_index,
        num_nodes=int(offsets[-1]),
    )
    for s in SPLITS:
        data[f"{s}_mask"] = torch.cat(masks[s])
    return data


def elliptic_validation(dataset, val_fraction: float = 0.1) -> Data:
    """Elliptic Bitcoin: PyG's time split (train steps 1-34, test 35-49, unknown-class
    nodes in neither); validation = the last ``val_fraction`` of the labelled training
    nodes in file order. Classes: 0 licit, 1 illicit (2 = unknown, never scored)."""
    data = dataset[0].clone()
    train = data.train_mask.nonzero().view(-1)
    _, val = _tail_validation(train.tolist(), val_fraction)
    data.val_mask = torch.zeros_like(data.train_mask)
    data.val_mask[val] = True
    data.train_mask = data.train_mask & ~data.val_mask
    return data


def _with_degree(graph: Data) -> Data:
    graph = graph.clone()
    deg = degree(graph.edge_index[0], graph.num_nodes)
    graph.x = torch.stack([torch.ones_like(deg), torch.log1p(deg)], dim=1)
    return graph


def degree_features(parts: Mapping[str, Any]) -> dict[str, list]:
    """Featureless graphs (MalNet-Tiny): x = [1, log(1 + out-degree)] per node."""
    return {s: [_with_degree(g) for g in parts[s]] for s in SPLITS}


def _mesh_graph(shape: Data) -> Data:
    from torch_geometric.transforms import FaceToEdge

    graph = FaceToEdge(remove_faces=True)(shape.clone())
    graph.x = graph.pos
    return graph


def mesh_graphs(parts: Mapping[str, Any], val_fraction: float = 0.1) -> dict[str, list]:
    """ModelNet meshes as graphs: mesh edges (FaceToEdge), x = vertex coordinates;
    the canonical train/test split, validation carved from the end of train."""
    parts = _with_validation(parts, val_fraction)
    return {s: [_mesh_graph(g) for g in parts[s]] for s in SPLITS}


def _superpixel(graph: Data) -> Data:
    graph = graph.clone()
    graph.x = torch.cat([graph.x.view(graph.num_nodes, -1), graph.pos], dim=1).float()
    return graph


def superpixels(
    parts: Mapping[str, Any], num_graphs: int | None = None, val_fraction: float = 0.1
) -> dict[str, list] | list:
    """Superpixel graphs (MNIST, CIFAR-10): x = [intensity or RGB, position].

    ``num_graphs`` set: the first that many training graphs as one list (the task draws a
    seeded split; the reference benchmark uses MNIST's first 1 500). Else the canonical
    split, with validation carved from the end of train where the dataset has none.
    """
    if num_graphs is not None:
        train = parts["train"]
        return [_superpixel(train[i]) for i in range(min(num_graphs, len(train)))]
    parts = _with_validation(parts, val_fraction)
    return {s: [_superpixel(g) for g in parts[s]] for s in SPLITS}


def point_cloud_parts(parts: Mapping[str, Any], k: int = 6, max_shapes: int = 200) -> Data:
    """ShapeNet part segmentation as node classification on one graph: each shape's points
    joined to their ``k`` nearest neighbours (symmetric k-NN graph), the first ``max_shapes`` shapes of each split
    as a disjoint union, x = [position, normal], y = part label."""
    graphs = {}
    for split in SPLITS:
        part = parts[split]
        shapes = [part[i] for i in range(min(max_shapes, len(part)))]
        graphs[split] = [
            Data(x=torch.cat([g.pos, g.x], 1), y=g.y, edge_index=knn_edges(g.pos.numpy(), k))
            for g in shapes
        ]
    return disjoint_union(graphs)


def qm9_target(dataset, target: int = 0) -> list[Data]:
    """QM9 molecules with one regression target (column ``target`` of PyG's 19; 0 = dipole
    moment μ in Debye). x = PyG's 11 atom features."""
    if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < 19:
        raise ValueError(f"target must be a QM9 target column 0..18, got {target!r}")
    graphs = []
    for i in range(len(dataset)):
        graph = dataset[i]
        graphs.append(Data(x=graph.x.float(), edge_index=graph.edge_index, y=graph.y[:, target]))
    return graphs


ZINC_ATOM_TYPES = 28


def zinc_atoms(parts: Mapping[str, Any]) -> dict[str, list]:
    """ZINC: x = one-hot atom type (28 types), y = constrained solubility."""
    out = {}
    for split in SPLITS:
        graphs = []
        for i in range(len(parts[split])):
            graph = parts[split][i]
            graphs.append(
                Data(
                    x=F.one_hot(graph.x.view(-1), ZINC_ATOM_TYPES).float(),
                    edge_index=graph.edge_index,
                    y=graph.y.view(-1).float(),
                )
            )
        out[split] = graphs
    return out
