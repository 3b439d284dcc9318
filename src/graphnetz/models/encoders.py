"""Node encoders: one message-passing stack, five layer choices (GCN, GAT, SAGE, GT, MLP).

Every encoder maps ``(x, edge_index) -> [N, out_channels]``. For node classification
``out_channels`` is the number of classes; the task adapters (graph pooling, link decoders)
ask for ``out_channels = hidden_channels`` and put their own head on top.
"""

from __future__ import annotations

import numbers
from typing import ClassVar

import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.contract import GraphModel
from graphnetz.models.convs import (
    CachedNormGCNConv,
    LinearFirstSAGEConv,
    SparseInputTransformerConv,
    share_normalization,
)
from graphnetz.models.features import input_dropout as sparse_input_dropout
from graphnetz.models.gat_conv import SortedGATConv
from graphnetz.models.graph_cache import AdjacencyCache
from graphnetz.models.sparse_features import SparseFeatures, SparseRows, fast_dropout, project

#: Non-linearities between an encoder's layers (``activation``).
ACTIVATIONS = {"relu": F.relu, "elu": F.elu}


class NodeEncoder(GraphModel):
    """``num_layers`` layers built by :meth:`make_layer`, ReLU + dropout between them,
    and dropout on the input features unless ``input_dropout=False``
    (``+model.input_dropout=false``; the GraphNetz paper's reference encoders drop only
    between layers). ``activation`` (``+model.activation=elu``) is the non-linearity
    between layers: ``relu`` or ``elu`` (the reference GAT's).

    Subclasses only say how one layer is made; everything else (depth, dropout, the
    task types they can serve through adapters) is shared.
    """

    uses_edges: ClassVar[bool] = True
    #: Layers that only sum or average neighbours take a sparse adjacency instead of
    #: ``edge_index`` (one sparse-dense product per layer, no per-edge gather/scatter).
    sparse_aggregation: ClassVar[bool] = False

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int = 64,
        out_channels: int | None = None,
        num_layers: int = 2,
        dropout: float = 0.5,
        input_dropout: bool = True,
        activation: str = "relu",
        **layer_kwargs,
    ) -> None:
        super().__init__()
        if not isinstance(input_dropout, bool):
            raise ValueError(f"input_dropout must be true or false, got {input_dropout!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.activation = ACTIVATIONS[activation]
        if num_layers < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise ValueError(f"dropout must be a number in [0, 1), got {dropout!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {dropout!r}")
        if hidden_channels < 1:
            raise ValueError(f"hidden_channels must be >= 1, got {hidden_channels!r}")
        out_channels = hidden_channels if out_channels is None else out_channels
        self.in_channels, self.out_channels = in_channels, out_channels
        self.dropout = dropout
        #: Dropout on the input features too (Kipf & Welling), not only between layers.
        self.input_dropout = input_dropout
        dims = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
        self.layers = nn.ModuleList(
            self.make_layer(d_in, d_out, last=i == num_layers - 1, **layer_kwargs)
            for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True))
        )
        self._adjacency = AdjacencyCache()
        self._sparse_features = SparseFeatures()

    def make_layer(self, d_in: int, d_out: int, last: bool, **kwargs) -> nn.Module:
        raise NotImplementedError

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.apply_layers(x, edge_index, len(self.layers))

    def apply_layers(self, x: Tensor, edge_index: Tensor, count: int) -> Tensor:
        """The first ``count`` layers, each but the stack's output layer followed by the
        activation (``count = len(layers) - 1`` gives the hidden representation DGI
        pre-trains)."""
        if self.sparse_aggregation:
            edge_index = self._adjacency.adjacency(edge_index, x.size(0))
        x = self._sparse_features.get(x)  # bag-of-words, one-hot ids: mostly zeros
        for i, layer in enumerate(self.layers[:count]):
            if i > 0 or self.input_dropout:
                x = _dropout(x, self.dropout, self.training)
            x = layer(x, edge_index) if self.uses_edges else project(layer, x)
            if i < len(self.layers) - 1:
                x = self.activation(x)
        return x


def _dropout(x, p: float, training: bool):
    """Dropout of dense features, sparse tensors or :class:`SparseRows` (stored entries)."""
    if isinstance(x, SparseRows):
        return x.dropout(p, training)
    if x.is_sparse:
        return sparse_input_dropout(x, p, training)
    return fast_dropout(x, p, training)


class GCN(NodeEncoder):
    """Kipf & Welling (2017): symmetric-normalised graph convolution."""

    sparse_aggregation = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        share_normalization(self.layers)  # one gcn_norm per new graph, not one per layer

    def make_layer(self, d_in, d_out, last, cached: bool = False):
        return CachedNormGCNConv(d_in, d_out, cached=cached)


class GraphSAGE(NodeEncoder):
    """Hamilton et al. (2017), mean aggregation over the full neighbourhood."""

    def make_layer(self, d_in, d_out, last, aggr: str = "mean"):
        # Sum and mean run as sparse products; other aggregators keep edge_index.
        self.sparse_aggregation = aggr in ("mean", "sum", "add")
        return LinearFirstSAGEConv(d_in, d_out, aggr=aggr)


class _MultiHead(NodeEncoder):
    """Attention encoders: hidden layers concatenate ``heads`` heads, the last one averages.

    A hidden layer is ``hidden_channels`` wide, split over the heads; with
    ``head_channels`` (``+model.head_channels=64``) each head is that wide instead, so a
    hidden layer is ``heads x head_channels`` and ``hidden_channels`` stays the width of
    the output where a task asks for it (link and graph adapters): the encoders of the
    GraphNetz paper's reference (8 x 64 for GAT, 4 x 64 for the GraphTransformer, into a
    64-wide embedding).
    """

    conv: ClassVar[type]

    def __init__(
        self,
        in_channels,
        hidden_channels=64,
        out_channels=None,
        num_layers=2,
        dropout=0.5,
        heads: int = 8,
        attn_dropout: float = 0.6,
        head_channels: int | None = None,
        **kw,
    ):
        if heads < 1:
            raise ValueError(f"heads must be >= 1, got {heads!r}")
        out_channels = hidden_channels if out_channels is None else out_channels
        if head_channels is not None:
            if isinstance(head_channels, bool) or not isinstance(head_channels, int):
                raise ValueError(f"head_channels must be a whole number, got {head_channels!r}")
            if head_channels < 1:
                raise ValueError(f"head_channels must be >= 1 (or null), got {head_channels!r}")
            hidden_channels = heads * head_channels
        elif hidden_channels % heads:
            raise ValueError(
                f"hidden_channels ({hidden_channels}) must be divisible by heads ({heads}), "
                "or set head_channels (the width of each head)"
            )
        super().__init__(
            in_channels,
            hidden_channels,
            out_channels,
            num_layers,
            dropout,
            heads=heads,
            attn_dropout=attn_dropout,
            **kw,
        )

    def make_layer(self, d_in, d_out, last, heads, attn_dropout):
        if last:
            return self.conv(d_in, d_out, heads=1, concat=False, dropout=attn_dropout)
        return self.conv(d_in, d_out // heads, heads=heads, dropout=attn_dropout)


class GAT(_MultiHead):
    """Veličković et al. (2018), multi-head additive attention (PyG's ``GATConv``, summing
    over neighbours through a sorted sparse layout on simple graphs)."""

    conv = SortedGATConv


class GraphTransformer(_MultiHead):
    """Shi et al. (2021), TransformerConv (scaled dot-product attention over neighbours)."""

    conv = SparseInputTransformerConv


class MLP(NodeEncoder):
    """Features only: the same stack with linear layers, edges ignored (a graph-free baseline)."""

    uses_edges = False

    def make_layer(self, d_in, d_out, last):
        return nn.Linear(d_in, d_out)


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


__all__ = ["GAT", "GCN", "MLP", "GraphSAGE", "GraphTransformer", "NodeEncoder", "count_parameters"]
