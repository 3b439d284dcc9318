"""PyG convolutions with the same parameters and values, minus work that repeats per step.

- :class:`CachedNormGCNConv`: ``GCNConv`` whose symmetric normalisation (self-loops,
  degrees) is computed once per graph instead of in every forward pass. Unlike PyG's
  ``cached=True`` it notices a new graph (mini-batches of graph-level tasks). Its sparse
  product's backward reuses one transpose per normalised graph. The layers of one
  encoder share that cache (:func:`share_normalization`): a new mini-batch is
  normalised once, not once per layer.
- :class:`LinearFirstSAGEConv`: ``SAGEConv`` that applies its neighbour weight before
  a mean or sum aggregation (the same linear map, moved across a linear operator), so
  it aggregates ``out`` instead of ``in`` channels and takes sparse input features.
- :class:`SparseInputTransformerConv`: ``TransformerConv`` whose query, key, value and
  skip maps of sparse input features are one sparse-dense product.

All three take :class:`graphnetz.models.sparse_features.SparseRows` features.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.nn import GCNConv, SAGEConv, TransformerConv
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphnetz.models.graph_cache import GraphCache
from graphnetz.models.sparse_features import SparseRows, dense_or_tensor, project
from graphnetz.models.sparse_products import fixed_matrix_product

LINEAR_AGGREGATIONS = ("mean", "sum", "add")


class CachedNormGCNConv(GCNConv):
    """``GCNConv`` with the normalised adjacency built once per graph (values unchanged)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._normalized = GraphCache()

    def forward(self, x: Tensor, edge_index, edge_weight: Tensor | None = None) -> Tensor:
        if (
            not self.normalize
            or self.cached
            or edge_weight is not None
            or not isinstance(x, Tensor | SparseRows)
            or not isinstance(edge_index, Tensor)
        ):
            return super().forward(dense_or_tensor(x), edge_index, edge_weight)
        dtype = x.dtype

        def normalize(graph: Tensor, num_nodes: int):
            return gcn_norm(
                graph, None, num_nodes, self.improved, self.add_self_loops, self.flow, dtype
            )

        graph, weight = self._normalized.get(edge_index, x.size(self.node_dim), normalize)
        out = self.propagate(graph, x=project(self.lin, x), edge_weight=weight)
        return out if self.bias is None else out + self.bias

    def message_and_aggregate(self, adj_t, x: Tensor) -> Tensor:
        if isinstance(adj_t, Tensor) and adj_t.layout == torch.sparse_csr and self.aggr == "add":
            return fixed_matrix_product(adj_t, x)  # GCNConv's sum, transpose built once
        return super().message_and_aggregate(adj_t, x)


def share_normalization(layers) -> None:
    """One normalisation cache for the :class:`CachedNormGCNConv` layers among ``layers``
    that normalise alike (same ``improved``, ``add_self_loops``, ``flow``): every layer
    of an encoder sees the same graph, so what one layer builds for a new mini-batch is
    what the next would build again (MUTAG, 3 layers: gcn_norm ran three times a batch).
    """
    caches: dict[tuple, GraphCache] = {}
    for layer in layers:
        if type(layer) is CachedNormGCNConv:
            key = (layer.improved, layer.add_self_loops, layer.flow)
            layer._normalized = caches.setdefault(key, layer._normalized)


class LinearFirstSAGEConv(SAGEConv):
    """``SAGEConv`` computing ``agg(x) W = agg(x W)`` for mean/sum aggregation.

    Used when it saves work (fewer output than input channels) and whenever the input
    is sparse (a sparse-dense product, then the aggregation of dense rows). Other
    aggregators, projections and bipartite inputs go through ``SAGEConv`` (sparse
    input densified there).
    """

    def _linear_first(self, x) -> bool:
        return (
            isinstance(x, Tensor | SparseRows)
            and not self.project
            and isinstance(self.aggr, str)
            and self.aggr in LINEAR_AGGREGATIONS
            and (x.is_sparse or self.out_channels < x.size(-1))
        )

    def forward(self, x, edge_index, size=None) -> Tensor:
        if size is not None or not self._linear_first(x):
            if isinstance(x, Tensor | SparseRows) and x.is_sparse:
                x = x.to_dense()
            return super().forward(x, edge_index, size)
        h = (
            x.linear(self.lin_l.weight)
            if isinstance(x, SparseRows)
            else F.linear(x, self.lin_l.weight)
        )
        out = self.propagate(edge_index, x=(h, h))
        if self.lin_l.bias is not None:
            out = out + self.lin_l.bias
        if self.root_weight:
            out = out + project(self.lin_r, x)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out


class SparseInputTransformerConv(TransformerConv):
    """``TransformerConv``; for :class:`SparseRows` input the four linear maps of ``x``
    (query, key, value, skip) run as one sparse-dense product, the rest as PyG does."""

    def forward(self, x, edge_index, edge_attr=None, return_attention_weights=None):
        if not isinstance(x, SparseRows) or return_attention_weights is not None:
            return super().forward(
                dense_or_tensor(x), edge_index, edge_attr, return_attention_weights
            )
        heads, channels = self.heads, self.out_channels
        maps = [self.lin_query, self.lin_key, self.lin_value]
        maps += [self.lin_skip] if self.root_weight else []
        weight = torch.cat([m.weight for m in maps])
        biases = [
            m.bias if m.bias is not None else m.weight.new_zeros(m.weight.size(0)) for m in maps
        ]
        projected = x.linear(weight, torch.cat(biases))
        parts = projected.split([m.weight.size(0) for m in maps], dim=1)
        query, key, value = (part.view(-1, heads, channels) for part in parts[:3])
        out = self.propagate(edge_index, query=query, key=key, value=value, edge_attr=edge_attr)
        self._alpha = None
        out = out.reshape(-1, heads * channels) if self.concat else out.mean(dim=1)
        if self.root_weight:
            x_r = parts[3]
            if self.lin_beta is not None:
                beta = self.lin_beta(torch.cat([out, x_r, out - x_r], dim=-1)).sigmoid()
                out = beta * x_r + (1 - beta) * out
            else:
                out = out + x_r
        return out


__all__ = ["CachedNormGCNConv", "LinearFirstSAGEConv", "SparseInputTransformerConv"]
