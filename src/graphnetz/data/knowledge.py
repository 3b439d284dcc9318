"""Knowledge graphs for relational link prediction: FB15k-237 and WN18RR.

Both come as ``Data(edge_index, edge_type, train_mask, val_mask, test_mask, num_nodes)``
with ``num_relations``: one triple (head, relation, tail) per column, the dataset's
predefined split as masks over the triples. Raw files are staged from the mirror
(``<mirror>/<Class>/raw/{train,valid,test}.txt``) into ``root``; the mirror is only read.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch
from torch_geometric.data import Data

from graphnetz.data.mirror import build_from_mirror

KG_FILES = ("train.txt", "valid.txt", "test.txt")


def _triples(parts: list[Data], num_nodes: int) -> Data:
    """Concatenate the train/val/test parts into one triple set with split masks."""
    sizes = [p.edge_index.size(1) for p in parts]
    masks = []
    for i, _ in enumerate(parts):
        mask = torch.zeros(sum(sizes), dtype=torch.bool)
        start = sum(sizes[:i])
        mask[start : start + sizes[i]] = True
        masks.append(mask)
    edge_type = torch.cat([p.edge_type for p in parts])
    data = Data(
        edge_index=torch.cat([p.edge_index for p in parts], dim=1),
        edge_type=edge_type,
        train_mask=masks[0],
        val_mask=masks[1],
        test_mask=masks[2],
        num_nodes=num_nodes,
    )
    data.num_relations = int(edge_type.max()) + 1
    return data


def load_fb15k_237(root: str | os.PathLike, mirror=None) -> Data:
    """FB15k-237 (Toutanova & Chen 2015): 14 541 entities, 237 relations, 310 116 triples."""
    from torch_geometric.datasets import FB15k_237

    base = Path(root) / "FB15k_237"
    parts = build_from_mirror(
        "FB15k-237",
        mirror,
        "FB15k_237/raw",
        base / "raw",
        KG_FILES,
        lambda: [FB15k_237(str(base), split=s)[0] for s in ("train", "val", "test")],
    )
    return _triples(parts, int(parts[0].num_nodes))


def load_wn18rr(root: str | os.PathLike, mirror=None) -> Data:
    """WN18RR (Dettmers et al. 2018): 40 943 entities, 11 relations, 93 003 triples."""
    from torch_geometric.datasets import WordNet18RR

    base = Path(root) / "WordNet18RR"
    data = build_from_mirror(
        "WN18RR",
        mirror,
        "WordNet18RR/raw",
        base / "raw",
        KG_FILES,
        lambda: WordNet18RR(str(base))[0],
    )
    data.num_relations = int(data.edge_type.max()) + 1
    return data
