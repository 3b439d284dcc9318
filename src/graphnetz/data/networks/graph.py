"""What every network reader returns, and the one cleaning rule that turns it into a graph.

A reader returns a :class:`RawGraph`: the edges exactly as the file lists them (directed,
parallel or self-loop edges included) over nodes numbered 0..N-1. :func:`simple_undirected`
then applies the documented rule once for all formats: direction is dropped, each
unordered pair {u, v} with u != v becomes one undirected edge (stored in both directions,
as torch_geometric expects), self-loops are removed, and every node the file declares is
kept, isolated or not.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce


class NetworkFormatError(ValueError):
    """A network file is truncated, corrupt or not in the format its reader expects."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = str(path)


@dataclass(frozen=True)
class RawGraph:
    """Edges as listed in the file (0-based node numbers), before any cleaning."""

    num_nodes: int
    edges: np.ndarray  # (E, 2) int64
    directed: bool = False
    node_attrs: dict[str, list] = field(default_factory=dict)
    edge_attrs: dict[str, list] = field(default_factory=dict)
    # the file's node labels in node order, for formats that name nodes (edge lists)
    node_ids: tuple | None = None

    @property
    def num_raw_edges(self) -> int:
        return int(self.edges.shape[0])


class NodeIndex:
    """Node labels -> 0..N-1, numbered in order of first appearance."""

    def __init__(self, labels: Iterable[Hashable] = ()) -> None:
        self.index: dict[Hashable, int] = {}
        for label in labels:
            self.add(label)

    def add(self, label: Hashable) -> int:
        return self.index.setdefault(label, len(self.index))

    def __len__(self) -> int:
        return len(self.index)


def edges_array(pairs: Iterable[tuple[int, int]] | np.ndarray) -> np.ndarray:
    array = np.asarray(pairs if isinstance(pairs, np.ndarray) else list(pairs), dtype=np.int64)
    return array.reshape(-1, 2)


def simple_undirected(raw: RawGraph) -> Data:
    """The simple undirected graph of ``raw`` (see the module docstring for the rule)."""
    edges = torch.from_numpy(raw.edges).t()
    edges = edges[:, edges[0] != edges[1]]
    both = torch.cat([edges, edges.flip(0)], dim=1)
    edge_index = coalesce(both, num_nodes=raw.num_nodes)
    return Data(edge_index=edge_index, num_nodes=raw.num_nodes)
