"""Several seeds of one node encoder as one model: parameters stacked along a seed axis.

On a small graph a training step costs its dispatch (hundreds of tiny kernels, each a few
microseconds of Python and ATen), not its arithmetic. :class:`StackedEncoder` takes the S
encoders that S runs of one cell built (same class, same settings, each initialised from
its own seed) and runs them as one: every linear map is one batched product over the seed
axis, every propagation one sparse product over ``[N, S x width]``, attention treats the
seeds as more heads, and one optimiser step updates all of them. Each seed draws its
dropout masks from its own generator (:class:`SeedStreams`), continuing the random state
its run alone would have, in the same order and with the same kernels, so a stacked
seed computes what its run alone computes, bit for bit, whatever other seeds run beside
it (``tests/test_stacked_seeds.py`` checks every encoder; tensors are kept contiguous in
the layouts the run alone uses, since a sum over a strided view may round differently).

Covered: GCN, GraphSAGE (mean or sum aggregation), GAT (simple graphs), GraphTransformer
and MLP, with dense or sparse (:class:`SparseRows`) input features. Anything else raises
:class:`StackRefused` with the reason; the runs then train one at a time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import Linear as PygLinear
from torch_geometric.utils import scatter, softmax

from graphnetz.models.bernoulli import bernoulli_
from graphnetz.models.convs import (
    LINEAR_AGGREGATIONS,
    CachedNormGCNConv,
    LinearFirstSAGEConv,
    SparseInputTransformerConv,
)
from graphnetz.models.encoders import (
    GAT,
    GCN,
    MLP,
    GraphSAGE,
    GraphTransformer,
    NodeEncoder,
)
from graphnetz.models.gat_conv import SortedGATConv, _head_layout
from graphnetz.models.graph_cache import GraphCache, is_simple
from graphnetz.models.sparse_features import SparseRows

#: Encoder classes that stack (exact classes: a subclass may change what a layer does).
STACKABLE_ENCODERS = (GCN, GraphSAGE, GAT, GraphTransformer, MLP)


class StackRefused(ValueError):
    """These encoders (or this graph) cannot be trained stacked; the message says why."""


class SeedStreams:
    """One random generator per seed, each continuing the global state its run had.

    Every draw a run alone makes from torch's global generator is made here from its
    seed's generator, with the same function and shape, so it gets the same numbers.
    """

    def __init__(self, generators: Sequence[torch.Generator]) -> None:
        self.generators = list(generators)

    @classmethod
    def from_states(cls, states: Sequence[Tensor]) -> SeedStreams:
        """Generators that continue from the given ``torch.get_rng_state()`` states."""
        generators = []
        for state in states:
            generator = torch.Generator()
            generator.set_state(state)
            generators.append(generator)
        return cls(generators)

    def __len__(self) -> int:
        return len(self.generators)

    def loader_seed(self) -> None:
        """The base seed a ``DataLoader`` iterator draws when it is created."""
        for g in self.generators:
            torch.empty((), dtype=torch.int64).random_(generator=g)

    def keep_masks(self, like: Tensor, p: float) -> list[Tensor]:
        """Each seed's scaled keep mask of ``fast_dropout``: uniform draws laid out in
        ``like``'s memory order, as ``torch.rand_like`` lays them out."""
        scale = 1.0 / (1.0 - p)
        return [
            (torch.empty_like(like).uniform_(0, 1, generator=g) >= p).to(like.dtype).mul_(scale)
            for g in self.generators
        ]

    def uniform_keep(self, like: Tensor, p: float) -> Tensor:
        """The masks of :meth:`keep_masks` stacked: ``[S, *like.shape]``."""
        return torch.stack(self.keep_masks(like, p))

    def bernoulli_noise(self, shape, p: float, dtype: torch.dtype, dim: int) -> Tensor:
        """The noise of ``F.dropout`` on CPU (Bernoulli(1 - p) / (1 - p)) per seed,
        stacked along ``dim``."""
        noise = []
        for g in self.generators:
            draw = bernoulli_(torch.empty(shape, dtype=dtype), 1 - p, generator=g)
            noise.append(draw.div_(1 - p))
        return torch.stack(noise, dim=dim)


# ---------------------------------------------------------------- seed-axis helpers
class _Stack:
    """One parameter of every seed's layer, stacked along a new first axis per step.

    The parameters stay the seeds' own tensors: the optimiser updates, and a seed's
    checkpoint saves, exactly the tensors of its run alone, with the same shapes.
    """

    def __init__(self, tensors: Sequence[Tensor]) -> None:
        self.tensors = list(tensors)

    def __call__(self) -> Tensor:
        return torch.stack(self.tensors)


def _optional_stack(tensors: Sequence[Tensor | None]) -> _Stack | None:
    return None if tensors[0] is None else _Stack(tensors)


def _value(stack: _Stack | None) -> Tensor | None:
    return None if stack is None else stack()


def _linear(x, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Per seed ``F.linear(x_s, W_s, b_s)``: ``x`` is ``[S, N, F]`` dense or a list of
    :class:`SparseRows` (one per seed); result ``[S, N, out]``."""
    if isinstance(x, list):
        outs = [rows.linear(weight[s]) for s, rows in enumerate(x)]
        out = torch.stack(outs)
        return out if bias is None else out + bias.unsqueeze(1)
    return _BatchedLinear.apply(x, weight, bias)


class _BatchedLinear(torch.autograd.Function):
    """``F.linear`` per seed, with the gradients ``F.linear`` computes alone.

    Autograd's own ``bmm`` backward forms the weight gradient as ``x^T g`` and transposes
    it, while ``F.linear``'s (``addmm`` with a transposed weight) forms ``g^T x``: the
    same sums in another blocking, which round differently for narrow outputs. Here the
    backward makes the products ``F.linear``'s backward makes, batched over the seeds.
    """

    @staticmethod
    def forward(ctx, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        if bias is None:
            return torch.bmm(x, weight.transpose(1, 2))
        return torch.baddbmm(bias.unsqueeze(1), x, weight.transpose(1, 2))

    @staticmethod
    def backward(ctx, grad: Tensor):
        x, weight = ctx.saved_tensors
        grad = grad.contiguous()  # a sum over a strided view rounds differently
        grad_x = torch.bmm(grad, weight) if ctx.needs_input_grad[0] else None
        grad_weight = torch.bmm(grad.transpose(1, 2), x) if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(1) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_weight, grad_bias


def _swap_seed_axis(h: Tensor) -> Tensor:
    """``[S, N, ...]`` <-> ``[N, S, ...]`` (seed-major <-> node-major), contiguous."""
    return h.transpose(0, 1).contiguous()


def _propagate(conv, graph, h: Tensor, pair: bool = False, **kwargs) -> Tensor:
    """``conv.propagate`` of each seed's ``[N, F]`` features, one call per seed, as its
    run alone calls it; ``pair``: the layer takes ``x=(source, target)`` features, as SAGE
    does. Not one ``[N, S x F]`` product: MKL picks a sparse product's kernel by the
    number of columns (on one machine 4 columns and 28 summed in another order), so a
    seed's columns in a wider product can round differently from its run alone."""
    return torch.stack([conv.propagate(graph, x=(p, p) if pair else p, **kwargs) for p in h])


def _sparse_rows(x) -> bool:
    return isinstance(x, list) or isinstance(x, SparseRows)


# ---------------------------------------------------------------- stacked layers
class _StackedGCN(nn.Module):
    def __init__(self, convs: Sequence[CachedNormGCNConv]) -> None:
        super().__init__()
        conv = convs[0]
        if not conv.normalize or conv.cached or type(conv) is not CachedNormGCNConv:
            raise StackRefused("GCN layers stack with normalize=true and cached=false only")
        self.__dict__["conv"] = conv  # its propagate and normalisation cache, not its weights
        self.weight = _Stack([c.lin.weight for c in convs])
        self.bias = _optional_stack([c.bias for c in convs])

    def forward(self, x, graph, streams=None) -> Tensor:
        conv = self.conv
        dtype = x[0].dtype if isinstance(x, list) else x.dtype

        def normalize(edges: Tensor, num_nodes: int):
            from torch_geometric.nn.conv.gcn_conv import gcn_norm

            return gcn_norm(
                edges, None, num_nodes, conv.improved, conv.add_self_loops, conv.flow, dtype
            )

        n = x[0].size(0) if isinstance(x, list) else x.size(1)
        edges, weight = conv._normalized.get(graph, n, normalize)
        out = _propagate(conv, edges, _linear(x, self.weight()), edge_weight=weight)
        return out if self.bias is None else out + self.bias().unsqueeze(1)


class _StackedSAGE(nn.Module):
    def __init__(self, convs: Sequence[LinearFirstSAGEConv]) -> None:
        super().__init__()
        conv = convs[0]
        if (
            type(conv) is not LinearFirstSAGEConv
            or conv.project
            or conv.normalize
            or not isinstance(conv.aggr, str)
            or conv.aggr not in LINEAR_AGGREGATIONS
        ):
            raise StackRefused("GraphSAGE layers stack with mean or sum aggregation only")
        self.__dict__["conv"] = conv
        self.weight_l = _Stack([c.lin_l.weight for c in convs])
        self.bias_l = _optional_stack([c.lin_l.bias for c in convs])
        self.weight_r = _Stack([c.lin_r.weight for c in convs]) if conv.root_weight else None
        if conv.root_weight and convs[0].lin_r.bias is not None:
            raise StackRefused("GraphSAGE root weight with a bias is not stacked")

    def forward(self, x, graph, streams=None) -> Tensor:
        conv = self.conv
        in_width = x[0].size(1) if isinstance(x, list) else x.size(-1)
        linear_first = _sparse_rows(x) or conv.out_channels < in_width
        if linear_first:  # LinearFirstSAGEConv: agg(x W) + b (+ x W_r)
            h = _linear(x, self.weight_l())
            out = _propagate(conv, graph, h, pair=True)
            if self.bias_l is not None:
                out = out + self.bias_l().unsqueeze(1)
        else:  # SAGEConv: lin_l(agg(x)) (+ lin_r(x))
            out = _linear(
                _propagate(conv, graph, x, pair=True), self.weight_l(), _value(self.bias_l)
            )
        if self.weight_r is not None:
            out = out + _linear(x, self.weight_r())
        return out


class _StackedGAT(nn.Module):
    """``SortedGATConv``'s fast path with the seeds as more heads."""

    def __init__(self, convs: Sequence[SortedGATConv], seeds: int) -> None:
        super().__init__()
        conv = convs[0]
        if (
            type(conv) is not SortedGATConv
            or conv.lin is None
            or conv.res is not None
            or conv.edge_dim is not None
            or not conv.add_self_loops
        ):
            raise StackRefused("GAT layers stack on SortedGATConv's fast path only")
        self.heads, self.channels, self.concat = conv.heads, conv.out_channels, conv.concat
        self.dropout, self.negative_slope = conv.dropout, conv.negative_slope
        self.seeds = seeds
        self.weight = _Stack([c.lin.weight for c in convs])
        self.att_src = _Stack([c.att_src for c in convs])
        self.att_dst = _Stack([c.att_dst for c in convs])
        self.bias = _optional_stack([c.bias for c in convs])
        self._layouts = GraphCache()

    def forward(self, x, edge_index: Tensor, streams=None) -> Tensor:
        s, heads, channels = self.seeds, self.heads, self.channels
        n = x[0].size(0) if isinstance(x, list) else x.size(1)
        if not is_simple(edge_index, n):
            raise StackRefused("GAT stacks on simple graphs only (no self-loops, no repeats)")
        edges, segments, weighted_sum = self._layouts.get(
            edge_index, n, lambda ei, num: _head_layout(ei, num, s * heads)
        )
        h = _linear(x, self.weight()).view(s, n, heads, channels)
        alpha_src = (h * self.att_src()).sum(dim=-1)  # [S, N, H], as (h * att).sum(-1) alone
        alpha_dst = (h * self.att_dst()).sum(dim=-1)
        src, dst = edges
        alpha = alpha_src[:, src] + alpha_dst[:, dst]  # [S, E, H]
        alpha = F.leaky_relu(alpha, self.negative_slope)
        alpha = _swap_seed_axis(alpha).view(-1, s * heads)  # [E, S x H]
        alpha = segments.softmax(alpha)
        if self.training and self.dropout > 0:
            shape = (alpha.size(0), heads)
            noise = streams.bernoulli_noise(shape, self.dropout, alpha.dtype, dim=1)
            alpha = alpha * noise.view(-1, s * heads)
        h = _swap_seed_axis(h.view(s, n, heads * channels)).view(n * s * heads, channels)
        out = weighted_sum(alpha.reshape(-1), h).view(n, s, heads, channels)
        out = out.reshape(n, s, heads * channels) if self.concat else out.mean(dim=2)
        out = _swap_seed_axis(out)
        return out if self.bias is None else out + self.bias().unsqueeze(1)


class _StackedTransformer(nn.Module):
    """``TransformerConv`` (through ``SparseInputTransformerConv``) with the seeds as
    more heads."""

    def __init__(self, convs: Sequence[SparseInputTransformerConv], seeds: int) -> None:
        super().__init__()
        conv = convs[0]
        if (
            type(conv) is not SparseInputTransformerConv
            or conv.lin_edge is not None
            or conv.lin_beta is not None
        ):
            raise StackRefused("GraphTransformer layers stack without edge features or beta")
        self.heads, self.channels, self.concat = conv.heads, conv.out_channels, conv.concat
        self.dropout, self.root_weight, self.seeds = conv.dropout, conv.root_weight, seeds
        names = ["lin_query", "lin_key", "lin_value"] + (["lin_skip"] if self.root_weight else [])
        for name in names:
            lins = [getattr(c, name) for c in convs]
            setattr(self, f"{name}_weight", _Stack([lin.weight for lin in lins]))
            setattr(self, f"{name}_bias", _optional_stack([lin.bias for lin in lins]))
        self.names = names

    def _maps(self, x) -> list[Tensor]:
        if not isinstance(x, list):
            return [
                _linear(x, getattr(self, f"{m}_weight")(), _value(getattr(self, f"{m}_bias")))
                for m in self.names
            ]
        # SparseInputTransformerConv: the maps of sparse rows as one product per seed
        widths = [getattr(self, f"{m}_weight").tensors[0].size(0) for m in self.names]
        per_seed = []
        for s, rows in enumerate(x):
            weight = torch.cat([getattr(self, f"{m}_weight").tensors[s] for m in self.names])
            biases = [self._bias(m, s) for m in self.names]
            per_seed.append(rows.linear(weight, torch.cat(biases)))
        return list(torch.stack(per_seed).split(widths, dim=2))

    def _bias(self, name: str, s: int) -> Tensor:
        bias = getattr(self, f"{name}_bias")
        if bias is not None:
            return bias.tensors[s]
        weight = getattr(self, f"{name}_weight").tensors[s]
        return weight.new_zeros(weight.size(0))

    def forward(self, x, edge_index: Tensor, streams=None) -> Tensor:
        s, heads, channels = self.seeds, self.heads, self.channels
        maps = self._maps(x)
        n = maps[0].size(1)
        query, key, value = (_swap_seed_axis(m).view(n, s * heads, channels) for m in maps[:3])
        src, dst = edge_index
        alpha = (query.index_select(0, dst) * key.index_select(0, src)).sum(dim=-1)
        alpha = alpha / math.sqrt(channels)
        alpha = softmax(alpha, dst, None, n)
        if self.training and self.dropout > 0:
            shape = (alpha.size(0), heads)
            noise = streams.bernoulli_noise(shape, self.dropout, alpha.dtype, dim=1)
            alpha = alpha * noise.view(-1, s * heads)
        message = value.index_select(0, src) * alpha.view(-1, s * heads, 1)
        out = scatter(message, dst, 0, dim_size=n, reduce="sum").view(n, s, heads, channels)
        out = out.reshape(n, s, heads * channels) if self.concat else out.mean(dim=2)
        out = _swap_seed_axis(out)
        return out + maps[3] if self.root_weight else out


class _StackedLinear(nn.Module):
    def __init__(self, lins: Sequence[nn.Linear]) -> None:
        super().__init__()
        if type(lins[0]) not in (nn.Linear, PygLinear):
            raise StackRefused(f"MLP layers of type {type(lins[0]).__name__} are not stacked")
        self.weight = _Stack([lin.weight for lin in lins])
        self.bias = _optional_stack([lin.bias for lin in lins])

    def forward(self, x, graph=None, streams=None) -> Tensor:
        return _linear(x, self.weight(), _value(self.bias))


# ---------------------------------------------------------------- the encoder
class StackedEncoder(nn.Module):
    """S encoders of one class and settings as one module: ``forward`` gives ``[S, N, out]``.

    Built from the encoders the runs built (their parameters are copied; the encoders are
    kept for their graph caches). ``streams`` gives each seed's dropout draws in training.
    """

    def __init__(self, encoders: Sequence[NodeEncoder]) -> None:
        super().__init__()
        first = encoders[0]
        if type(first) not in STACKABLE_ENCODERS:
            raise StackRefused(
                f"{type(first).__name__} is not stacked (stacked: "
                f"{', '.join(c.__name__ for c in STACKABLE_ENCODERS)})"
            )
        for other in encoders[1:]:
            if type(other) is not type(first) or _settings(other) != _settings(first):
                raise StackRefused("the encoders differ in class or settings")
        self.__dict__["template"] = first  # graph caches and settings
        # The seeds' own encoders hold the parameters (updated in place); kept outside the
        # module tree, so that train() / eval() touch only the few stacked layers.
        self.__dict__["encoders"] = list(encoders)
        self.seeds = len(encoders)
        self.layers = nn.ModuleList(
            _stacked_layer(first, [e.layers[i] for e in encoders], self.seeds)
            for i in range(len(first.layers))
        )

    def seed_parameters(self) -> list[nn.Parameter]:
        """Every seed's parameters, seed by seed (what the optimiser updates)."""
        return [p for encoder in self.encoders for p in encoder.parameters()]

    def forward(self, x: Tensor, edge_index: Tensor, streams: SeedStreams | None = None):
        first = self.template
        n = x.size(0)
        graph = (
            first._adjacency.adjacency(edge_index, n) if first.sparse_aggregation else edge_index
        )
        h = first._sparse_features.get(x)
        h = _per_seed_input(h, self.seeds, first.input_dropout and self.training, first, streams)
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            if i > 0 and self.training and first.dropout > 0:
                h = h * streams.uniform_keep(h[0], first.dropout)
            h = layer(h, graph if first.uses_edges else None, streams)
            if i < last:
                h = _activate(first.activation, h)
        return h


def _activate(function, h: Tensor) -> Tensor:
    """The activation of every seed; other than ReLU seed by seed, since a vectorised
    kernel may round an element differently by its offset in the tensor (ELU does)."""
    if function is F.relu:
        return function(h)
    return torch.stack([function(part) for part in h])


def _settings(encoder: NodeEncoder) -> tuple:
    dims = tuple((p.shape, p.dtype) for p in encoder.parameters())
    return (
        encoder.dropout,
        encoder.input_dropout,
        encoder.activation,
        encoder.in_channels,
        encoder.out_channels,
        len(encoder.layers),
        dims,
    )


def _per_seed_input(x, seeds: int, drop: bool, encoder: NodeEncoder, streams):
    """The first layer's input per seed: ``[S, N, F]`` dense, or one SparseRows per seed,
    with each seed's input dropout when ``drop``."""
    p = encoder.dropout
    if isinstance(x, SparseRows):
        if not drop or p == 0.0:
            return [x] * seeds
        masks = streams.uniform_keep(x.values, p)
        return [x.with_values(x.values * masks[s]) for s in range(seeds)]
    if not isinstance(x, Tensor) or x.is_sparse or x.dim() != 2:
        raise StackRefused("stacked encoders take 2-D dense or sparse-row features")
    if not drop or p == 0.0:
        return _stack_like([x] * seeds, x)
    return _stack_like([x * mask for mask in streams.keep_masks(x, p)], x)


def _stack_like(parts: list[Tensor], like: Tensor) -> Tensor:
    """``[S, N, F]`` whose slices are laid out as ``like`` (row- or column-major), so that
    each seed's first product sees its input as the run alone does (a product of a
    column-major matrix is another BLAS call, which may round differently)."""
    if like.is_contiguous():
        return torch.stack(parts)
    if like.t().is_contiguous():
        return torch.stack([part.t() for part in parts]).transpose(1, 2)
    raise StackRefused("features laid out neither row- nor column-major are not stacked")


def _stacked_layer(encoder: NodeEncoder, layers: list[nn.Module], seeds: int) -> nn.Module:
    if isinstance(encoder, GCN):
        return _StackedGCN(layers)
    if isinstance(encoder, GraphSAGE):
        return _StackedSAGE(layers)
    if isinstance(encoder, GAT):
        return _StackedGAT(layers, seeds)
    if isinstance(encoder, GraphTransformer):
        return _StackedTransformer(layers, seeds)
    return _StackedLinear(layers)


__all__ = ["STACKABLE_ENCODERS", "SeedStreams", "StackRefused", "StackedEncoder"]
