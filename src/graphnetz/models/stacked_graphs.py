"""Several seeds of one graph-level model run on one batch: the union of their batches.

A graph-level run trains on shuffled mini-batches, so the seeds of a cell see different
graphs at every step; they cannot share a feature matrix as node-level stacks do
(:mod:`graphnetz.models.stacked`). :class:`GraphStack` runs them on the *union* of their
batches instead: seed s's graphs are the nodes ``node_ptr[s]:node_ptr[s + 1]`` and the
graphs ``graph_ptr[s]:graph_ptr[s + 1]`` of one disjoint batch. What depends on a seed's
parameters (every linear map, the bias, GIN's MLPs with their batch norm, the readout
heads) runs per seed on its rows, through the seed's own modules, exactly as its run
alone calls them; what depends only on the graphs runs once for all seeds: the
normalised adjacency, every propagation over the edges, the pooling. Batches are
disjoint, so a node's neighbours, and the order in which their messages are summed, are
those of its run alone; its sums are the same, bit for bit
(``tests/test_stacked_graphs.py`` compares every seed with its run alone).

Random draws a seed's forward pass makes (dropout) are made from its own stream
(:func:`seed_stream`), so they are the draws of its run alone.

Covered: the pooled node encoders GCN, GraphSAGE (mean or sum aggregation) and MLP
(:class:`graphnetz.models.adapters.PooledEncoder`), and GIN. Attention encoders (GAT,
GraphTransformer) and anything else raise :class:`StackRefused`: those runs train alone.
(A union version of both was built and was exact, but 10 MUTAG seeds x 40 epochs took
as long stacked as one at a time, 1.02x and 0.99x: their per-edge work grows with the
union, so it was removed; docs/speed.md.)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn
from torch_geometric.nn import global_add_pool, global_mean_pool
from torch_geometric.nn.conv.gcn_conv import gcn_norm

from graphnetz.models.adapters import PooledEncoder
from graphnetz.models.convs import (
    LINEAR_AGGREGATIONS,
    CachedNormGCNConv,
    LinearFirstSAGEConv,
)
from graphnetz.models.encoders import GCN, MLP, GraphSAGE, _dropout
from graphnetz.models.gin import GIN
from graphnetz.models.sparse_features import SPARSE_MIN_COLUMNS, project
from graphnetz.models.stacked import StackRefused

#: Encoders that stack inside a pooled graph-level model (exact classes).
STACKABLE_POOLED = (GCN, GraphSAGE, MLP)


@contextmanager
def seed_stream(generator: torch.Generator) -> Iterator[None]:
    """Torch's global generator holds ``generator``'s state inside the block, and gives
    it back after: code run inside draws what it draws in its run alone."""
    saved = torch.get_rng_state()
    torch.set_rng_state(generator.get_state())
    try:
        yield
    finally:
        generator.set_state(torch.get_rng_state())
        torch.set_rng_state(saved)


def _parts(h: Tensor, ptr: Sequence[int]) -> tuple[Tensor, ...]:
    """Seed s's rows of ``h``: ``h[ptr[s]:ptr[s + 1]]``, as one split (whose backward
    is one concatenation; a slice's backward writes a zero tensor of all the rows)."""
    return torch.split(h, [b - a for a, b in zip(ptr[:-1], ptr[1:], strict=True)])


class GraphStack:
    """S graph-level models (one class and settings, each with its own parameters) run
    on the union of the seeds' batches; ``forward`` gives each seed's graph outputs."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        first = models[0]
        for other in models[1:]:
            if type(other) is not type(first) or _shapes(other) != _shapes(first):
                raise StackRefused("the models differ in class or settings")
        if isinstance(first, GIN):
            self._forward = self._gin
        elif type(first) is PooledEncoder:
            encoder = first.encoder
            if type(encoder) not in STACKABLE_POOLED:
                raise StackRefused(
                    f"graph-level {type(encoder).__name__} is not stacked (stacked: GIN and "
                    f"pooled {', '.join(c.__name__ for c in STACKABLE_POOLED)})"
                )
            if encoder.in_channels >= SPARSE_MIN_COLUMNS:
                raise StackRefused("wide input features (possibly sparse rows) are not stacked")
            for layer in encoder.layers:
                _check_layer(layer)
            self._forward = self._pooled
        else:
            raise StackRefused(f"graph-level model {type(first).__name__} is not stacked")
        self.models = list(models)

    def train(self, mode: bool = True) -> GraphStack:
        for model in self.models:
            model.train(mode)
        return self

    def eval(self) -> GraphStack:
        return self.train(False)

    def parameters(self) -> list[nn.Parameter]:
        """Every seed's parameters, seed by seed (what the optimiser updates)."""
        return [p for model in self.models for p in model.parameters()]

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        batch: Tensor,
        node_ptr: Sequence[int],
        graph_ptr: Sequence[int],
        streams: Sequence[torch.Generator],
    ) -> list[Tensor]:
        """Seed s's outputs ``[graph_ptr[s + 1] - graph_ptr[s], out]``, for every seed."""
        return self._forward(x, edge_index, batch, node_ptr, graph_ptr, streams)

    __call__ = forward

    # ---- pooled node encoders ------------------------------------------------------
    def _pooled(self, x, edge_index, batch, node_ptr, graph_ptr, streams) -> list[Tensor]:
        encoders = [m.encoder for m in self.models]
        first = encoders[0]
        graph = (
            first._adjacency.adjacency(edge_index, x.size(0))
            if first.sparse_aggregation
            else edge_index
        )
        h = x
        last = len(first.layers) - 1
        for i in range(len(first.layers)):
            if (i > 0 or first.input_dropout) and first.dropout > 0 and first.training:
                h = torch.cat(
                    [
                        _in_stream(streams[s], _dropout, part, first.dropout, True)
                        for s, part in enumerate(_parts(h, node_ptr))
                    ]
                )
            layers = [e.layers[i] for e in encoders]
            h = _layer(layers, h, graph if first.uses_edges else None, node_ptr)
            if i < last:
                h = _activate(first.activation, h, node_ptr)
        pooled = _parts(global_mean_pool(h, batch), graph_ptr)
        return [
            _in_stream(streams[s], model.head, pooled[s]) for s, model in enumerate(self.models)
        ]

    # ---- GIN -----------------------------------------------------------------------
    def _gin(self, x, edge_index, batch, node_ptr, graph_ptr, streams) -> list[Tensor]:
        first = self.models[0]
        states = [x]
        for depth, conv in enumerate(first.convs):
            h = states[-1]
            summed = conv.propagate(edge_index, x=(h, h), size=None)
            states.append(
                torch.cat(
                    [
                        model.convs[depth].nn(agg + (1 + model.convs[depth].eps) * part)
                        for model, agg, part in zip(
                            self.models, _parts(summed, node_ptr), _parts(h, node_ptr), strict=True
                        )
                    ]
                )
            )
        pooled = [_parts(global_add_pool(h, batch), graph_ptr) for h in states]
        outs = []
        for s, model in enumerate(self.models):
            with seed_stream(streams[s]):
                out = 0
                for depth, head in enumerate(model.heads):
                    logits = head(pooled[depth][s])
                    out = out + nn.functional.dropout(
                        logits, p=model.dropout, training=model.training
                    )
            outs.append(out)
        return outs


def _activate(function, h: Tensor, node_ptr) -> Tensor:
    """The activation of every seed: ReLU at once (exact element by element), any other
    seed by seed, as a vectorised kernel may round an element by its offset (ELU does)."""
    if function is nn.functional.relu:
        return function(h)
    return torch.cat([function(part) for part in _parts(h, node_ptr)])


def _in_stream(generator: torch.Generator, function, *args):
    with seed_stream(generator):
        return function(*args)


def _shapes(model: nn.Module) -> tuple:
    return tuple((name, p.shape) for name, p in model.named_parameters()) + (repr(model),)


def _check_layer(layer: nn.Module) -> None:
    if type(layer) is CachedNormGCNConv:
        if not layer.normalize or layer.cached:
            raise StackRefused("GCN layers stack with normalize=true and cached=false only")
    elif type(layer) is LinearFirstSAGEConv:
        if (
            layer.project
            or layer.normalize
            or not isinstance(layer.aggr, str)
            or layer.aggr not in LINEAR_AGGREGATIONS
        ):
            raise StackRefused("GraphSAGE layers stack with mean or sum aggregation only")
    elif type(layer) is not nn.Linear:
        raise StackRefused(f"layers of type {type(layer).__name__} are not stacked")


def _layer(layers: Sequence[nn.Module], h: Tensor, graph, node_ptr) -> Tensor:
    """One layer of every seed on the union: each seed's maps on its rows, the
    propagation once."""
    conv = layers[0]
    parts = _parts(h, node_ptr)
    if isinstance(conv, nn.Linear):
        return torch.cat([project(layer, part) for layer, part in zip(layers, parts, strict=True)])
    if isinstance(conv, CachedNormGCNConv):
        return _gcn(layers, h, parts, graph, node_ptr)
    return _sage(layers, h, parts, graph, node_ptr)


def _gcn(layers, h: Tensor, parts, graph, node_ptr) -> Tensor:
    """``CachedNormGCNConv.forward`` of every seed."""
    conv = layers[0]

    def normalize(edges: Tensor, num_nodes: int):
        return gcn_norm(
            edges, None, num_nodes, conv.improved, conv.add_self_loops, conv.flow, h.dtype
        )

    edges, weight = conv._normalized.get(graph, h.size(0), normalize)
    projected = torch.cat(
        [project(layer.lin, part) for layer, part in zip(layers, parts, strict=True)]
    )
    out = conv.propagate(edges, x=projected, edge_weight=weight)
    if conv.bias is None:
        return out
    return torch.cat(
        [part + layer.bias for layer, part in zip(layers, _parts(out, node_ptr), strict=True)]
    )


def _sage(layers, h: Tensor, parts, graph, node_ptr) -> Tensor:
    """``LinearFirstSAGEConv.forward`` (mean or sum aggregation) of every seed."""
    conv = layers[0]
    if conv._linear_first(h):  # agg(x W) + b (+ x W_r)
        projected = torch.cat(
            [
                nn.functional.linear(part, layer.lin_l.weight)
                for layer, part in zip(layers, parts, strict=True)
            ]
        )
        summed = _parts(conv.propagate(graph, x=(projected, projected)), node_ptr)
        outs = []
        for layer, agg, part in zip(layers, summed, parts, strict=True):
            out = agg if layer.lin_l.bias is None else agg + layer.lin_l.bias
            outs.append(out + project(layer.lin_r, part) if layer.root_weight else out)
        return torch.cat(outs)
    summed = _parts(conv.propagate(graph, x=(h, h), size=None), node_ptr)  # SAGEConv.forward
    outs = []
    for layer, agg, part in zip(layers, summed, parts, strict=True):
        out = layer.lin_l(agg)
        outs.append(out + layer.lin_r(part) if layer.root_weight else out)
    return torch.cat(outs)


__all__ = ["STACKABLE_POOLED", "GraphStack", "seed_stream"]
