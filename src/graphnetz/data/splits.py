"""Seeded splits for datasets that ship none."""

from __future__ import annotations

import torch
from torch import Tensor


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
