"""H2GCN (Zhu et al., NeurIPS 2020): designs for graphs beyond homophily."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.multilabel._graph import GraphCache, normalize, propagate, simple_edges


def strict_two_hop(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Pairs (i, j) at shortest-path distance exactly 2: in A², not in A, and i != j.

    Computed with a sparse-sparse product on CPU/GPU; its size can approach
    sum_v deg(v)² on high-degree graphs.
    """
    ei = simple_edges(edge_index, num_nodes)
    ones = torch.ones(ei.size(1), device=ei.device)
    adj = torch.sparse_coo_tensor(
        ei, ones, (num_nodes, num_nodes), check_invariants=False
    ).coalesce()
    with warnings.catch_warnings():  # torch flags its sparse kernels as beta
        warnings.simplefilter("ignore", UserWarning)
        two = torch.sparse.mm(adj, adj).coalesce().indices()
    key2 = two[0] * num_nodes + two[1]
    key1 = ei[0] * num_nodes + ei[1]
    keep = (two[0] != two[1]) & ~torch.isin(key2, key1)
    return two[:, keep]


def _neighbourhoods(edge_index: Tensor, num_nodes: int) -> list[tuple[Tensor, Tensor]]:
    hops = [simple_edges(edge_index, num_nodes), strict_two_hop(edge_index, num_nodes)]
    return [(ei, normalize(ei, num_nodes, mode="sym")) for ei in hops]


class H2GCN(nn.Module):
    """Ego embedding, then K rounds of separate 1-hop / strict 2-hop aggregation.

    r_0 = ReLU(X W_e); r_k = [Â_1 r_{k-1} || Â_2 r_{k-1}] (no self-loops, symmetric
    normalisation, no per-round weights or non-linearity as in the paper);
    logits = W_c · dropout([r_0 || r_1 || ... || r_K]). ``num_layers`` is K, and the
    width of r_k is 2^k · hidden_channels.
    """

    task_types = frozenset({"ml_node_cls", "node_cls"})

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        out_channels: int,
        num_layers: int = 2,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"H2GCN needs num_layers (rounds K) >= 1, got {num_layers}")
        self.num_layers = num_layers
        self.dropout = dropout
        self.ego = nn.Linear(in_channels, hidden_channels)
        final_width = hidden_channels * (2 ** (num_layers + 1) - 1)
        self.classifier = nn.Linear(final_width, out_channels)
        self._cache = GraphCache()

    def reset_parameters(self) -> None:
        self.ego.reset_parameters()
        self.classifier.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        hops = self._cache.get(edge_index, x.size(0), _neighbourhoods)
        x = F.dropout(x, self.dropout, self.training)
        reps = [F.relu(self.ego(x))]
        for _ in range(self.num_layers):
            prev = reps[-1]
            reps.append(torch.cat([propagate(ei, coef, prev) for ei, coef in hops], dim=-1))
        h = F.dropout(torch.cat(reps, dim=-1), self.dropout, self.training)
        return self.classifier(h)
