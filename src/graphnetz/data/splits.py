"""Seeded splits for datasets that ship none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

#: ``dataset.split.type``: the dataset's own masks / canonical split, or a seeded one.
SPLIT_TYPES = ("canonical", "random")


def split_spec(split: Any) -> dict | None:
    """``dataset.split`` as a dict (or None: the dataset's own masks / canonical split).

    Accepts None, ``"random"``, ``"canonical"`` or a mapping whose ``type`` (if given) is
    one of :data:`SPLIT_TYPES`; anything else is refused with the valid forms named.
    """
    if split is None:
        return None
    if isinstance(split, str):
        split = {"type": split}
    if not isinstance(split, Mapping):
        raise TypeError(
            f"dataset.split must be None (the dataset's masks/canonical split), one of "
            f"{list(SPLIT_TYPES)} or a dict like {{'type': 'random', 'train': 0.6, 'val': 0.2}}; "
            f"got {split!r}"
        )
    kind = split.get("type")
    if kind is not None and kind not in SPLIT_TYPES:
        raise ValueError(f"dataset.split.type={kind!r} is not one of {list(SPLIT_TYPES)}")
    return dict(split)


def random_node_split(
    num_nodes: int, seed: int, train: float = 0.6, val: float = 0.2
) -> tuple[Tensor, Tensor, Tensor]:
    """Boolean train/val/test masks from a seeded permutation (test gets the remainder)."""
    if not (0 < train < 1 and 0 <= val < 1 and train + val < 1):
        raise ValueError(
            f"split fractions train={train!r}, val={val!r} must be in (0, 1) and sum to less than 1"
        )
    perm = torch.randperm(num_nodes, generator=torch.Generator().manual_seed(int(seed)))
    n_train, n_val = round(train * num_nodes), round(val * num_nodes)
    masks = []
    for part in (perm[:n_train], perm[n_train : n_train + n_val], perm[n_train + n_val :]):
        mask = torch.zeros(num_nodes, dtype=torch.bool)
        mask[part] = True
        masks.append(mask)
    return tuple(masks)
