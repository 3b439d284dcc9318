"""Graph Isomorphism Network (Xu et al., 2019): a graph-level model.

Each layer is ``h' = MLP((1 + eps) h + sum_{u in N(v)} h_u)`` (GINConv, 2-layer MLP with
batch norm). The readout sums node states per graph at every depth (sum pooling keeps
GIN as discriminative as the WL test) and adds the per-depth linear predictions.
"""

from __future__ import annotations

from typing import ClassVar

import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GINConv, global_add_pool

from graphnetz.models.contract import GraphModel


def _mlp(d_in: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(d_in, d_out), nn.BatchNorm1d(d_out), nn.ReLU(), nn.Linear(d_out, d_out), nn.ReLU()
    )


class GIN(GraphModel):
    """``forward(x, edge_index, batch) -> [num_graphs, out_channels]``."""

    task_types: ClassVar[frozenset[str]] = frozenset({"graph_cls", "ml_graph_cls", "graph_reg"})
    graph_level: ClassVar[bool] = True  # adapters use it as it is for graph tasks

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 64,
        out_channels: int = 1,
        num_layers: int = 3,
        dropout: float = 0.5,
        train_eps: bool = False,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        dims = [in_channels] + [hidden_channels] * num_layers
        self.convs = nn.ModuleList(
            GINConv(_mlp(a, b), train_eps=train_eps)
            for a, b in zip(dims[:-1], dims[1:], strict=True)
        )
        # one linear prediction per depth (the input included), summed (Xu et al. eq. 4.2)
        self.heads = nn.ModuleList(nn.Linear(d, out_channels) for d in dims)
        self.dropout = dropout

    def forward(self, x: Tensor, edge_index: Tensor, batch: Tensor) -> Tensor:
        states = [x]
        for conv in self.convs:
            states.append(conv(states[-1], edge_index))
        out = 0
        for h, head in zip(states, self.heads, strict=True):
            pooled = global_add_pool(h, batch)
            out = out + F.dropout(head(pooled), p=self.dropout, training=self.training)
        return out
