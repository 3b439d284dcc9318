"""H2GCN (Zhu et al., NeurIPS 2020): designs for graphs beyond homophily."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.contract import GraphModel
from graphnetz.models.features import dropout_rows, input_dropout, linear, selected_rows
from graphnetz.models.graph_cache import GraphCache
from graphnetz.models.multilabel._graph import (
    DenseOperator,
    FixedOperator,
    normalize,
    simple_edges,
)
from graphnetz.models.multilabel.mask_products import ScaledMaskOperator

#: Keep Â₂ as a dense matrix when at least this fraction of its N² entries is non-zero:
#: there a dense product is as fast as a sparse one (HumLoc, 9 %: equal; PCG, 16 %:
#: dense 25 % faster), and BlogCatalog's strict 2-hop set is most of all pairs.
DENSE_FRACTION = 0.1
#: Dense Â₂ of at least this many nodes is multiplied exactly in int8 on the CPU
#: (:mod:`~graphnetz.models.multilabel.mask_products`): BlogCatalog's 10 312 nodes 1.45x
#: per epoch; on PCG's 3 233 the digit work outweighs the products (0.87x), so smaller
#: graphs keep the float matrix.
INT8_MIN_NODES = 8192


def _two_paths(ei: Tensor, num_nodes: int) -> int:
    """Number of directed 2-paths i -> k -> j, i.e. the entries of the product A·A before merging."""
    in_deg = torch.bincount(ei[1], minlength=num_nodes)
    out_deg = torch.bincount(ei[0], minlength=num_nodes)
    return int((in_deg * out_deg).sum())


def _prefers_dense(ei: Tensor, num_nodes: int) -> bool:
    # The sparse product holds ~24 bytes per 2-path while merging duplicates; the dense
    # route holds ~3 float matrices of N² cells: take whichever needs less memory.
    return 24 * _two_paths(ei, num_nodes) > 12 * num_nodes**2


def _strict_two_hop_mask(ei: Tensor, num_nodes: int) -> Tensor:
    """Bool ``[N, N]``: M[i, j] = (A²)_ij > 0 and A_ij = 0 and i != j (rows = sources)."""
    ones = torch.ones(ei.size(1), device=ei.device)
    adj = torch.sparse_coo_tensor(ei, ones, (num_nodes, num_nodes), check_invariants=False)
    dense = adj.to_dense()
    mask = torch.sparse.mm(adj, dense) > 0  # one sparse-dense product, no N³ work
    mask &= dense == 0
    mask.fill_diagonal_(False)
    return mask


def _strict_two_hop_sparse(ei: Tensor, num_nodes: int) -> Tensor:
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


def strict_two_hop(edge_index: Tensor, num_nodes: int) -> Tensor:
    """Pairs (i, j) at shortest-path distance exactly 2: in A², not in A, and i != j.

    ``[2, M]``, sorted by (i, j). A sparse-sparse product when A² is sparse; on graphs
    with hubs (Σ_k deg(k)² comparable to N²) one sparse-dense product into an N × N
    mask instead, which bounds memory by O(N²) rather than O(Σ_k deg(k)²).
    """
    ei = simple_edges(edge_index, num_nodes)
    if _prefers_dense(ei, num_nodes):
        return _strict_two_hop_mask(ei, num_nodes).nonzero().t()
    return _strict_two_hop_sparse(ei, num_nodes)


def _dense_sym_operator(mask: Tensor) -> ScaledMaskOperator | DenseOperator:
    """D^-1/2 A D^-1/2 as a dense ``[target, source]`` operator; ``mask`` is [source, target].

    On the CPU, from ``INT8_MIN_NODES`` nodes, the 0/1 matrix is kept as int8 and
    multiplied exactly (:mod:`~graphnetz.models.multilabel.mask_products`); otherwise
    as a float matrix.
    """
    deg = mask.sum(0).to(torch.float)  # in-degree of each target, as in ``normalize``
    inv = deg.pow(-0.5).masked_fill(deg <= 0, 0.0)
    if mask.device.type == "cpu" and mask.size(0) >= INT8_MIN_NODES:
        return ScaledMaskOperator(mask.t(), inv, inv)
    return DenseOperator(inv.unsqueeze(1) * mask.t().to(torch.float) * inv.unsqueeze(0))


def _pair_mask(pairs: Tensor, num_nodes: int) -> Tensor:
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool, device=pairs.device)
    mask[pairs[0], pairs[1]] = True
    return mask


def _sparse_sym_operator(ei: Tensor, num_nodes: int) -> FixedOperator:
    return FixedOperator(ei, normalize(ei, num_nodes, mode="sym"), num_nodes)


def _two_hop_operator(one: Tensor, num_nodes: int):
    dense_enough = DENSE_FRACTION * num_nodes**2
    if _prefers_dense(one, num_nodes):
        mask = _strict_two_hop_mask(one, num_nodes)
        if mask.sum() >= dense_enough:
            return _dense_sym_operator(mask)
        two = mask.nonzero().t()
    else:
        two = _strict_two_hop_sparse(one, num_nodes)
    if two.size(1) >= dense_enough:
        return _dense_sym_operator(_pair_mask(two, num_nodes))
    return _sparse_sym_operator(two, num_nodes)


def hop_operators(edge_index: Tensor, num_nodes: int) -> list:
    """Â₁ and Â₂ (symmetrically normalised, no self-loops) as fixed operators ``op(h)``.

    Built once per graph; each call is one sparse or dense matrix product, never a
    per-edge gather of rows (which cost O(|2-hop| · width) memory at every step).
    """
    one = simple_edges(edge_index, num_nodes)
    return [_sparse_sym_operator(one, num_nodes), _two_hop_operator(one, num_nodes)]


class H2GCN(GraphModel):
    """Ego embedding, then K rounds of separate 1-hop / strict 2-hop aggregation.

    r_0 = ReLU(X W_e); r_k = [Â_1 r_{k-1} || Â_2 r_{k-1}] (no self-loops, symmetric
    normalisation, no per-round weights or non-linearity as in the paper);
    logits = W_c · dropout([r_0 || r_1 || ... || r_K]). ``num_layers`` is K, and the
    width of r_k is 2^k · hidden_channels. Â_1 and Â_2 are built once per graph and
    cached (sparse, or dense where Â_2 covers >= 10 % of all node pairs: on the CPU and
    from ``INT8_MIN_NODES`` nodes a 0/1 int8 matrix multiplied exactly, see
    :mod:`~graphnetz.models.multilabel.mask_products`).

    ``forward(..., output_nodes=...)`` (the task passes the train nodes when training)
    computes the last round only for those rows; the dropout mask is still drawn for
    every node, so the values and random stream equal the full forward's.

    Without dropout (eval) the classifier is applied before propagating (see
    :meth:`propagate_scores`): the same logits, with products of C columns instead of
    2^k · hidden (BlogCatalog, dense Â_2: an evaluation pass 1.0 s instead of 3.2 s).
    """

    task_types = frozenset({"ml_node_cls", "node_cls"})
    #: forward takes ``output_nodes`` (see :meth:`graphnetz.tasks.node_tasks.NodeTask.training_loss`)
    computes_selected_nodes = True

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
        self._row_hops: tuple[list, Tensor, list] | None = None  # (hops, rows, hops restricted)

    def reset_parameters(self) -> None:
        self.ego.reset_parameters()
        self.classifier.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, output_nodes: Tensor | None = None) -> Tensor:
        num_nodes = x.size(0)
        hops = self._cache.get(edge_index, num_nodes, hop_operators)
        rows = selected_rows(output_nodes)
        x = input_dropout(x, self.dropout, self.training)
        reps = [F.relu(linear(self.ego, x))]
        if not self.training or self.dropout == 0.0:
            logits = self.propagate_scores(reps[0], hops)
            return logits if rows is None else logits[rows]
        for k in range(self.num_layers):
            last_round = k == self.num_layers - 1
            ops = self._restricted(hops, rows) if last_round and rows is not None else hops
            reps.append(torch.cat([op(reps[-1]) for op in ops], dim=-1))
        if rows is not None:  # the last round already holds the chosen rows only
            reps = [r[rows] for r in reps[:-1]] + reps[-1:]
        h = dropout_rows(torch.cat(reps, dim=-1), self.dropout, self.training, num_nodes, rows)
        return self.classifier(h)

    def _restricted(self, hops: list, rows: Tensor) -> list:
        """``hops`` computing only ``rows`` (the train nodes: cached while they stay the same)."""
        cached = self._row_hops
        if not (
            cached
            and cached[0] is hops
            and cached[1].shape == rows.shape
            and torch.equal(cached[1], rows)
        ):
            self._row_hops = (hops, rows.clone(), [op.rows(rows) for op in hops])
        return self._row_hops[2]

    def propagate_scores(self, r0: Tensor, hops: list) -> Tensor:
        """``classifier([r0 || r1 || ... || rK])`` without building any r_k (k >= 1).

        Block (j_1, ..., j_k) of r_k is Â_{j_1} ... Â_{j_k} r0 (j_1 outermost), so by
        linearity (Horner's rule over the path tree), with W_{k,p} the classifier's
        columns for block p of r_k:
        T_K(p) = r0 W_{K,p}^T;  T_{k-1}(p) = r0 W_{k-1,p}^T + Σ_j Â_j T_k(p + j);
        logits = T_0() + b. Each level is one product per operator, on N × (m^{k-1} C).
        """
        n, hidden = r0.shape
        m, out = len(hops), self.classifier.out_features
        widths = [hidden * m**k for k in range(self.num_layers + 1)]
        blocks = self.classifier.weight.split(widths, dim=1)

        def scores(k: int) -> Tensor:  # r0 W_{k,p}^T for every path p of length k: [N, m^k·C]
            weight = blocks[k].view(out, m**k, hidden).permute(2, 1, 0).reshape(hidden, -1)
            return r0 @ weight

        acc = scores(self.num_layers)
        for k in range(self.num_layers, 0, -1):
            acc = acc.view(n, m ** (k - 1), m, out)  # path p + j, j innermost
            propagated = sum(op(acc[:, :, j].reshape(n, -1)) for j, op in enumerate(hops))
            acc = scores(k - 1) + propagated
        return acc + self.classifier.bias
