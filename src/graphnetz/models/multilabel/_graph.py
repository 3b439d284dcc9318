"""Small graph operators shared by the multi-label baselines (pure torch)."""

from __future__ import annotations

import torch
from torch import Tensor


def simple_edges(edge_index: Tensor, num_nodes: int) -> Tensor:
    """``edge_index`` without self-loops and duplicate edges, sorted by (source, target)."""
    src, dst = edge_index
    keep = src != dst
    key = torch.unique(src[keep] * num_nodes + dst[keep])
    return torch.stack([key // num_nodes, key % num_nodes])


def normalize(
    edge_index: Tensor, num_nodes: int, weight: Tensor | None = None, mode: str = "sym"
) -> Tensor:
    """Edge coefficients of D^-1/2 A D^-1/2 (``"sym"``) or D^-1 A (``"row"``, by target).

    Degrees are weighted in-degrees of the targets; isolated nodes get coefficient 0
    instead of a division by zero.
    """
    src, dst = edge_index
    if weight is None:
        weight = torch.ones(src.numel(), device=edge_index.device)
    deg = torch.zeros(num_nodes, device=weight.device, dtype=weight.dtype)
    deg = deg.index_add(0, dst, weight)
    if mode == "sym":
        inv = deg.pow(-0.5).masked_fill(deg <= 0, 0.0)
        return inv[src] * weight * inv[dst]
    if mode == "row":
        inv = deg.reciprocal().masked_fill(deg <= 0, 0.0)
        return weight * inv[dst]
    raise ValueError(f"normalisation mode must be 'sym' or 'row', got {mode!r}")


def propagate(edge_index: Tensor, coef: Tensor, h: Tensor) -> Tensor:
    """out[j] = sum over edges (i -> j) of coef_ij * h[i]."""
    src, dst = edge_index
    out = torch.zeros_like(h)
    return out.index_add(0, dst, h[src] * coef.unsqueeze(-1))


class GraphCache:
    """Remembers one structure derived from a graph (e.g. H2GCN's 2-hop adjacency).

    Full-batch training calls ``forward`` with the same ``edge_index`` every step, so
    the derived structure is rebuilt only when the graph actually changes.
    """

    def __init__(self) -> None:
        self._edge_index: Tensor | None = None
        self._num_nodes = -1
        self._value = None

    def get(self, edge_index: Tensor, num_nodes: int, build):
        cached = self._edge_index
        hit = (
            cached is not None
            and num_nodes == self._num_nodes
            and (
                cached is edge_index
                or (
                    cached.shape == edge_index.shape
                    and cached.device == edge_index.device
                    and torch.equal(cached, edge_index)
                )
            )
        )
        if not hit:
            self._value = build(edge_index, num_nodes)
            self._edge_index, self._num_nodes = edge_index.clone(), num_nodes
        return self._value
