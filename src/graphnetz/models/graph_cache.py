"""Structures derived once from a graph and reused while the graph does not change."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor
from torch_geometric.utils import to_torch_csr_tensor

from graphnetz.identity_memo import IdentityMemo


class GraphCache:
    """Remembers the structure derived from a graph (e.g. H2GCN's 2-hop adjacency).

    Full-batch training calls ``forward`` with the same ``edge_index`` every step, so
    the derived structure is rebuilt only when the graph actually changes. The very same
    tensor, unmodified since (same ``_version``), hits without a comparison; another
    tensor hits when it equals the copy kept of the last graph (strided tensors only).

    Mini-batch tasks alternate graphs: new training batches, then the evaluation batches,
    which are collated once and come back every epoch. So the structure of every graph
    tensor that is still alive is kept too (at most :data:`MAX_LIVE_GRAPHS`, the oldest
    dropped first) and found by identity: a training batch's entry goes with its tensor,
    an evaluation batch's stays for the run.
    """

    #: Structures kept for live graph tensors besides the last graph's.
    MAX_LIVE_GRAPHS = 8

    def __init__(self) -> None:
        self._edge_index: Tensor | None = None
        self._num_nodes = -1
        self._value = None
        #: live graph tensor -> its structure, stamped with (version, num_nodes)
        self._live = IdentityMemo(max_entries=self.MAX_LIVE_GRAPHS)

    def _equals_last(self, edge_index: Tensor, num_nodes: int) -> bool:
        if num_nodes != self._num_nodes:
            return False
        cached = self._edge_index
        return (
            cached is not None
            and edge_index.layout == torch.strided
            and cached.shape == edge_index.shape
            and cached.device == edge_index.device
            and torch.equal(cached, edge_index)
        )

    def get(self, edge_index: Tensor, num_nodes: int, build):
        stamp = (tensor_version(edge_index), num_nodes)
        found = self._live.get(edge_index, stamp)  # (structure,): a structure may be None
        if found is not None:
            return found[0]
        if not self._equals_last(edge_index, num_nodes):
            # Built outside inference mode even when the first call evaluates: the
            # structure is reused by training steps, which cannot save inference tensors.
            with torch.inference_mode(False):
                self._value = build(edge_index, num_nodes)
            strided = edge_index.layout == torch.strided
            self._edge_index = edge_index.clone() if strided else None
            self._num_nodes = num_nodes
        if stamp[0] is not None:  # inference tensors keep no version: not safe to key on
            self._live.put(edge_index, (self._value,), stamp)
        return self._value


def tensor_version(tensor: Tensor) -> int | None:
    """The in-place modification counter of ``tensor`` (None for inference tensors,
    which keep none)."""
    return None if tensor.is_inference() else tensor._version


def is_simple(edge_index: Tensor, num_nodes: int) -> bool:
    """No self-loops and no repeated (source, target) pair."""
    src, dst = edge_index
    if bool((src == dst).any()):
        return False
    return torch.unique(src * num_nodes + dst).numel() == src.numel()


def _transposed_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor | None:
    # PyG treats self-loops and repeated edges differently for edge_index (GCN keeps
    # existing loops, mean counts repeats) than for sparse matrices (loops added on top,
    # repeats merged): only simple graphs switch, so the sums are always the same.
    if not is_simple(edge_index, num_nodes):
        return None
    # Row j lists the sources of the edges into j (PyG's ``adj_t``).
    with warnings.catch_warnings():  # torch flags sparse CSR support as beta
        warnings.simplefilter("ignore", UserWarning)
        return to_torch_csr_tensor(edge_index.flip(0), size=(num_nodes, num_nodes))


class AdjacencyCache(GraphCache):
    """``edge_index`` -> the transposed adjacency as a torch CSR matrix, built once per graph
    (``None`` for graphs with self-loops or repeated edges: keep ``edge_index`` there).

    PyG layers given this matrix aggregate with one sparse-dense product instead of
    gathering and scattering one feature row per edge: about 10x faster on CPU for
    BlogCatalog's 668k edges with 256 channels, same sums up to float rounding.
    """

    def adjacency(self, edge_index: Tensor, num_nodes: int) -> Tensor:
        """The cached sparse adjacency, or ``edge_index`` itself where it cannot be used."""
        adj_t = self.get(edge_index, num_nodes, _transposed_adjacency)
        return edge_index if adj_t is None else adj_t
