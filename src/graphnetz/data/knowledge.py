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

from graphnetz.data.mirror import resolve_mirror, stage_files, unavailable

KG_FILES = ("train.txt", "valid.txt", "test.txt")


def _stage(root, mirror, folder: str, name: str) -> tuple[Path, bool, Path | None, str]:
    mirror = resolve_mirror(mirror)
    relative = f"{folder}/raw"
    base = Path(root) / folder
    staged = stage_files(mirror, relative, base / "raw", KG_FILES, name)
    return base, staged, mirror, relative


def _triples(parts: list[Data], num_nodes: int) -> Data:
    """Concatenate the train/val/test parts into one triple set with split masks."""
    sizes = [p.edge_index.size(1) for p in parts]
    masks = []
    for i, _ in enumerate(parts):
        mask = torch.zeros(sum(sizes), dtype=torch.bool)
        start = sum(sizes[:i])
        mask[start:start + sizes[i]] = True
        masks.append(mask)
    edge_type = torch.cat([p.edge_type for p in parts])
    data = Data(edge_index=torch.cat([p.edge_index for p in parts], dim=1), edge_type=edge_type,
                train_mask=masks[0], val_mask=masks[1], test_mask=masks[2], num_nodes=num_nodes)
    data.num_relations = int(edge_type.max()) + 1
    return data


def load_fb15k_237(root: str | os.PathLike, mirror=None) -> Data:
    """FB15k-237 (Toutanova & Chen 2015): 14 541 entities, 237 relations, 310 116 triples."""
    from torch_geometric.datasets import FB15k_237

    base, staged, mirror, relative = _stage(root, mirror, "FB15k_237", "FB15k-237")
    try:
        parts = [FB15k_237(str(base), split=s)[0] for s in ("train", "val", "test")]
    except Exception as err:
        if staged:
            raise
        raise unavailable("FB15k-237", mirror, relative, KG_FILES, err) from err
    return _triples(parts, int(parts[0].num_nodes))


def load_wn18rr(root: str | os.PathLike, mirror=None) -> Data:
    """WN18RR (Dettmers et al. 2018): 40 943 entities, 11 relations, 93 003 triples."""
    from torch_geometric.datasets import WordNet18RR

    base, staged, mirror, relative = _stage(root, mirror, "WordNet18RR", "WN18RR")
    try:
        data = WordNet18RR(str(base))[0]
    except Exception as err:
        if staged:
            raise
        raise unavailable("WN18RR", mirror, relative, KG_FILES, err) from err
    data.num_relations = int(data.edge_type.max()) + 1
    return data
