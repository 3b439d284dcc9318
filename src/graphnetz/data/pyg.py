"""Loaders for datasets that torch_geometric ships a class for (Planetoid, Karate, ...).

Each loader takes ``root`` (the project's data directory) and ``mirror`` (a folder of raw
files in torch_geometric's layout, or None). With a mirror the raw files are staged into
``root`` first, so torch_geometric finds them and never downloads; the mirror is only read.
"""

from __future__ import annotations

import os
from pathlib import Path

from torch_geometric.data import Data

from graphnetz.data.mirror import resolve_mirror, stage_files, unavailable

PLANETOID_NAMES = ("Cora", "CiteSeer", "PubMed")
_PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")


def planetoid_raw_files(name: str) -> list[str]:
    return [f"ind.{name.lower()}.{suffix}" for suffix in _PLANETOID_SUFFIXES]


def load_planetoid(root: str | os.PathLike, mirror=None, *, name: str, split: str = "public") -> Data:
    """Planetoid citation graph with its canonical (public) split masks."""
    from torch_geometric.datasets import Planetoid

    if name not in PLANETOID_NAMES:
        raise ValueError(f"unknown Planetoid dataset {name!r}; valid: {list(PLANETOID_NAMES)}")
    mirror = resolve_mirror(mirror)
    relative = f"Planetoid/{name}/raw"
    files = planetoid_raw_files(name)
    base = Path(root) / "Planetoid"
    staged = stage_files(mirror, relative, base / name / "raw", files, name)
    try:
        return Planetoid(str(base), name, split=split)[0]
    except Exception as err:  # download failures surface as URLError/OSError/...
        if staged:
            raise
        raise unavailable(name, mirror, relative, files, err) from err


def load_karate(root=None, mirror=None) -> Data:
    """Zachary's karate club (built into torch_geometric: no files, no download)."""
    from torch_geometric.datasets import KarateClub

    data = KarateClub()[0]
    del data.train_mask  # one labelled node per class is no split; the task draws a seeded one
    return data
