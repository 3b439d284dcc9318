"""GCN-LPA (Wang & Leskovec, 2020): label propagation regularises learnable edge weights."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.contract import GraphModel
from graphnetz.models.features import input_dropout, linear
from graphnetz.models.graph_cache import GraphCache
from graphnetz.models.multilabel._graph import normalize, simple_edges
from graphnetz.models.sparse_products import WeightedAdjacency

# softplus(_UNIT) == 1, so every edge starts with weight 1 (plain GCN).
_UNIT = math.log(math.e - 1.0)


class _EdgeLayouts(NamedTuple):
    """What GCN-LPA derives once per graph: the simple edges, the learnable pair behind
    each, and sorted product layouts without (LPA) and with self-loops (GCN)."""

    edges: Tensor
    pair_of_edge: Tensor
    lpa: WeightedAdjacency
    with_loops: Tensor
    gcn: WeightedAdjacency


class GCNLPA(GraphModel):
    """GCN whose adjacency has one learnable positive weight per edge, shared with LPA.

    Weights a_ij = softplus(θ_ij) (θ initialised so a_ij = 1), one per undirected
    pair so both directions share it. GCN layers use D^-1/2 (A + I) D^-1/2 over the
    weighted graph. LPA uses the row-normalised D^-1 A without self-loops:
    Y⁰ = multi-hot labels of training nodes (0 elsewhere); Y^{t+1} = D^-1 A Y^t with
    training rows clamped back to their labels after every step except the last.
    The last step is left unclamped and is the prediction on training nodes, so a
    node never sees its own label directly (no self-loop, clamped labelled
    neighbours); it can only return via unlabelled intermediates after two or more
    steps. ``extra_loss`` = λ · BCE(Ŷ_train, Y_train).

    The edge weights depend on the graph, so ``precompute(data, seed)`` must run before
    the optimiser is built (the training task does this).
    """

    task_types = frozenset({"ml_node_cls", "node_cls"})

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        out_channels: int,
        num_layers: int = 2,
        dropout: float = 0.5,
        lpa_iters: int = 5,
        lpa_weight: float = 1.0,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"GCNLPA needs num_layers >= 1, got {num_layers}")
        if lpa_iters < 1:
            raise ValueError(f"lpa_iters must be >= 1, got {lpa_iters}")
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in pairwise(dims))
        self.dropout = dropout
        self.lpa_iters = lpa_iters
        self.lpa_weight = lpa_weight
        self.register_parameter("edge_logit", None)
        self.register_buffer("pairs", None)  # [2, P] undirected pairs with i < j
        self._layouts = GraphCache()

    def precompute(self, data, seed: int) -> None:
        """Create one learnable weight per undirected edge of ``data.edge_index``."""
        ei = simple_edges(data.edge_index, data.num_nodes)
        pairs = ei[:, ei[0] < ei[1]]
        self.pairs = pairs
        self.edge_logit = nn.Parameter(torch.full((pairs.size(1),), _UNIT, device=pairs.device))
        self._layouts = GraphCache()  # layouts map edges to these pairs: rebuild them

    def _edge_layouts(self, edge_index: Tensor, num_nodes: int) -> _EdgeLayouts:
        if self.pairs is None or self.edge_logit is None:
            raise RuntimeError("GCNLPA.precompute(data, seed) must be called before forward")
        return self._layouts.get(edge_index, num_nodes, self._build_layouts)

    def _build_layouts(self, edge_index: Tensor, num_nodes: int) -> _EdgeLayouts:
        ei = simple_edges(edge_index, num_nodes)
        key = self.pairs[0] * num_nodes + self.pairs[1]
        lo, hi = torch.minimum(ei[0], ei[1]), torch.maximum(ei[0], ei[1])
        wanted = lo * num_nodes + hi
        pair_of_edge = torch.searchsorted(key, wanted).clamp(max=max(key.numel() - 1, 0))
        if ei.size(1) and (key.numel() == 0 or not torch.equal(key[pair_of_edge], wanted)):
            raise ValueError(
                "GCNLPA got an edge_index with edges it was not prepared on; "
                "call precompute(data, seed) with this graph"
            )
        loops = torch.arange(num_nodes, device=ei.device)
        with_loops = torch.cat([ei, torch.stack([loops, loops])], dim=1)
        return _EdgeLayouts(
            ei,
            pair_of_edge,
            WeightedAdjacency(ei, num_nodes),
            with_loops,
            WeightedAdjacency(with_loops, num_nodes),
        )

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        n = x.size(0)
        layouts = self._edge_layouts(edge_index, n)
        w = F.softplus(self.edge_logit)[layouts.pair_of_edge]
        w = torch.cat([w, torch.ones(n, device=w.device, dtype=w.dtype)])
        coef = normalize(layouts.with_loops, n, w, mode="sym")
        for i, lin in enumerate(self.lins):
            x = input_dropout(x, self.dropout, self.training)
            x = layouts.gcn(coef, linear(lin, x))
            if i < len(self.lins) - 1:
                x = F.relu(x)
        return x

    def propagate_labels(self, data, train_mask: Tensor) -> Tensor:
        """LPA predictions Ŷ ∈ [0, 1]^{N×C} (see the class docstring for the clamping)."""
        n = data.num_nodes
        layouts = self._edge_layouts(data.edge_index, n)
        w = F.softplus(self.edge_logit)[layouts.pair_of_edge]
        coef = normalize(layouts.edges, n, w, mode="row")
        y = data.y.float()
        if y.dim() == 1:  # single-label targets -> one-hot
            y = F.one_hot(y.long(), self.lins[-1].out_features).float()
        mask = train_mask.unsqueeze(-1).to(y.dtype)
        seed_labels = y * mask
        state = seed_labels
        for t in range(self.lpa_iters):
            state = layouts.lpa(coef, state)
            if t < self.lpa_iters - 1:
                state = seed_labels + (1.0 - mask) * state
        return state

    def extra_loss(self, data, train_mask: Tensor) -> Tensor:
        """λ · BCE(LPA prediction, label) on the training nodes."""
        pred = self.propagate_labels(data, train_mask)[train_mask]
        target = (
            data.y.float() if data.y.dim() > 1 else F.one_hot(data.y.long(), pred.size(-1)).float()
        )
        pred = pred.clamp(1e-6, 1.0 - 1e-6)
        return self.lpa_weight * F.binary_cross_entropy(pred, target[train_mask])
