"""Open Graph Benchmark datasets through the optional ``ogb`` package.

``pip install graphnetz[ogb]`` (or ``pip install ogb``) installs it; without it every OGB
loader raises :class:`OgbMissingError` (a DatasetUnavailableError and an ImportError)
saying so. Mirror layout: OGB's own unzipped folder,
``<mirror>/<name with _>/{raw,split,mapping,RELEASE_v*.txt}`` (as ogbn_proteins); the whole
folder is staged into ``<root>/ogb/`` and OGB finds it there instead of downloading.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.utils import to_undirected

from graphnetz.data.mirror import (
    DatasetUnavailableError,
    resolve_mirror,
    stage_files,
    unavailable,
)

OGB_NAMES = {
    "ogbn-arxiv": "node",
    "ogbn-products": "node",
    "ogbl-collab": "link",
    "ogbg-molhiv": "graph",
    "ogbg-molpcba": "graph",
}
INSTALL_HINT = "pip install graphnetz[ogb]  (or: pip install ogb)"


class OgbMissingError(DatasetUnavailableError, ImportError):
    """An OGB dataset was asked for but the optional ``ogb`` package is not installed."""


def _module(level: str, name: str):
    try:
        if level == "node":
            from ogb.nodeproppred import PygNodePropPredDataset as cls
        elif level == "link":
            from ogb.linkproppred import PygLinkPropPredDataset as cls
        else:
            from ogb.graphproppred import PygGraphPropPredDataset as cls
    except ImportError as exc:
        raise OgbMissingError(
            f"dataset {name!r} is unavailable: OGB datasets need the optional 'ogb' package: "
            f"{INSTALL_HINT}"
        ) from exc
    return cls


def _stage_folder(mirror: Path | None, folder: str, target: Path) -> list[str]:
    """Every file of ``<mirror>/<folder>`` staged under ``target`` (none: no mirror copy)."""
    source = mirror / folder if mirror else None
    if source is None or not source.is_dir():
        return []
    files = sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file())
    stage_files(mirror, folder, target, files, folder)
    return files


def load_ogb(root: str | os.PathLike, mirror=None, *, name: str) -> Any:
    """An OGB dataset as a task takes it.

    Node datasets: one undirected graph with OGB's split as masks, ``y`` flattened. Link
    datasets: one undirected graph (the link task re-splits its edges with a seeded RandomLinkSplit, not OGB's
    time split). Graph datasets: ``{"train", "val", "test"}`` lists of OGB's scaffold
    split, the integer atom / bond features cast to float (:func:`task_graph`).
    """
    if name not in OGB_NAMES:
        raise ValueError(f"unknown OGB dataset {name!r}; valid: {sorted(OGB_NAMES)}")
    level = OGB_NAMES[name]
    cls = _module(level, name)
    folder = name.replace("-", "_")
    base = Path(root) / "ogb"
    mirror_path = resolve_mirror(mirror)
    staged = _stage_folder(mirror_path, folder, base / folder)
    try:
        dataset = cls(name=name, root=str(base))
    except Exception as exc:  # offline download failures
        if staged:
            raise
        raise unavailable(name, mirror_path, folder, ["raw/*", "split/*"], exc) from exc
    if level == "link":
        graph = dataset[0]
        edge_index = to_undirected(graph.edge_index, num_nodes=graph.num_nodes)
        return Data(x=graph.x.float(), edge_index=edge_index, num_nodes=graph.num_nodes)
    split = dataset.get_idx_split()
    if level == "graph":
        parts = {"train": "train", "val": "valid", "test": "test"}
        return {
            part: [task_graph(dataset[int(i)]) for i in split[key]] for part, key in parts.items()
        }
    graph = dataset[0]
    edge_index = to_undirected(graph.edge_index, num_nodes=graph.num_nodes)  # arxiv is directed
    data = Data(x=graph.x.float(), edge_index=edge_index, y=graph.y.view(-1))
    for part, key in (("train", "train"), ("val", "valid"), ("test", "test")):
        mask = torch.zeros(graph.num_nodes, dtype=torch.bool)
        mask[split[key]] = True
        data[f"{part}_mask"] = mask
    return data


def task_graph(graph: Data) -> Data:
    """An OGB molecule as the graph tasks take it: float ``x``; one label (ogbg-molhiv)
    as a class index ``[1]`` (graph_cls), several (ogbg-molpcba: OGB's ``[1, 128]``) as
    float ``[1, C]`` with NaN kept where a label was not measured (ml_graph_cls)."""
    y = graph.y
    y = y.view(-1).long() if y.numel() == 1 else y.view(1, -1).float()
    return Data(x=graph.x.float(), edge_index=graph.edge_index, y=y)
