"""Vectorised neighbour sampling in pure torch (no torch-sparse / pyg-lib needed).

Edges follow torch_geometric's ``source_to_target`` flow: ``edge_index[0]`` is the
source, ``edge_index[1]`` the target that aggregates it.
"""

from __future__ import annotations

import torch
from torch import Tensor


def to_csr(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    """Compressed rows of the out-neighbourhoods: ``(rowptr [N+1], col [E])``.

    The neighbours of ``v`` are ``col[rowptr[v]:rowptr[v+1]]``; edges are grouped by a
    stable sort on the source so equal inputs give equal outputs.
    """
    src, dst = edge_index
    order = torch.sort(src, stable=True).indices
    counts = torch.bincount(src, minlength=num_nodes)
    rowptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=edge_index.device)
    rowptr[1:] = torch.cumsum(counts, 0)
    return rowptr, dst[order]


def random_neighbor(
    rowptr: Tensor, col: Tensor, nodes: Tensor, generator: torch.Generator | None = None
) -> Tensor:
    """One uniformly random out-neighbour per entry of ``nodes`` (any shape).

    ``next = col[rowptr[v] + floor(u * deg(v))]`` with ``u ~ U[0, 1)``; isolated nodes
    stay where they are, so walks and stacks never leave the graph.
    """
    start = rowptr[nodes]
    deg = rowptr[nodes + 1] - start
    u = torch.rand(nodes.shape, generator=generator, device=nodes.device)
    # floor(u * deg) < deg for u < 1; the clamp guards float rounding at u -> 1.
    offset = torch.minimum((u * deg).long(), (deg - 1).clamp(min=0))
    pos = (start + offset).clamp(max=max(col.numel() - 1, 0))
    nxt = col[pos] if col.numel() > 0 else nodes
    return torch.where(deg > 0, nxt, nodes)


def sample_neighbors(
    edge_index: Tensor,
    num_nodes: int,
    k: int,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Keep at most ``k`` incoming edges per target node, chosen uniformly without replacement.

    Every edge gets a random key; edges are sorted by (target, key) and an edge is kept
    when its rank inside its target's group is below ``k``. Nodes with in-degree ``<= k``
    keep all their edges. ``k < 0`` keeps everything (torch_geometric's ``-1``
    convention). The result is a subset of the columns of ``edge_index`` in their
    original order.
    """
    if not isinstance(k, int) or isinstance(k, bool):
        raise TypeError(f"k must be an int (number of neighbours, or -1 for all), got {k!r}")
    if k < 0:
        return edge_index
    dst = edge_index[1]
    num_edges = dst.numel()
    keys = torch.rand(num_edges, generator=generator, device=dst.device)
    by_key = torch.argsort(keys)
    by_dst = torch.sort(dst[by_key], stable=True).indices
    perm = by_key[by_dst]  # edges sorted by (dst, key)
    counts = torch.bincount(dst, minlength=num_nodes)
    group_start = torch.cumsum(counts, 0) - counts
    rank = torch.arange(num_edges, device=dst.device) - group_start[dst[perm]]
    keep = torch.zeros(num_edges, dtype=torch.bool, device=dst.device)
    keep[perm[rank < k]] = True
    return edge_index[:, keep]
