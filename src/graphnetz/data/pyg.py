"""Loaders for datasets that torch_geometric ships a class for (Planetoid, Karate, ...).

Each loader takes ``root`` (the project's data directory) and ``mirror`` (a folder of raw
files in torch_geometric's layout, or None). With a mirror the raw files are staged into
``root`` first, so torch_geometric finds them and never downloads; the mirror is only read.
"""

from __future__ import annotations

import os
from pathlib import Path

from torch_geometric.data import Data

from graphnetz.data.mirror import build_from_mirror

PLANETOID_NAMES = ("Cora", "CiteSeer", "PubMed")
_PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")


def planetoid_raw_files(name: str) -> list[str]:
    return [f"ind.{name.lower()}.{suffix}" for suffix in _PLANETOID_SUFFIXES]


def load_planetoid(
    root: str | os.PathLike, mirror=None, *, name: str, split: str = "public"
) -> Data:
    """Planetoid citation graph with its canonical (public) split masks."""
    from torch_geometric.datasets import Planetoid

    if name not in PLANETOID_NAMES:
        raise ValueError(f"unknown Planetoid dataset {name!r}; valid: {list(PLANETOID_NAMES)}")
    base = Path(root) / "Planetoid"
    return build_from_mirror(
        name,
        mirror,
        f"Planetoid/{name}/raw",
        base / name / "raw",
        planetoid_raw_files(name),
        lambda: Planetoid(str(base), name, split=split)[0],
    )


def load_karate(root=None, mirror=None) -> Data:
    """Zachary's karate club (built into torch_geometric: no files, no download)."""
    from torch_geometric.datasets import KarateClub

    data = KarateClub()[0]
    del data.train_mask  # one labelled node per class is no split; the task draws a seeded one
    return data
