"""LANC: label-attentive neighbourhood convolution (after Zhou et al., 2020)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.bernoulli import dropout
from graphnetz.models.contract import GraphModel
from graphnetz.models.features import dropout_rows, input_dropout, linear, selected_rows
from graphnetz.models.graph_cache import GraphCache
from graphnetz.models.sampling import random_neighbor, to_csr


def neighbour_stack(
    edge_index: Tensor,
    num_nodes: int,
    k: int,
    generator: torch.Generator | None = None,
    csr: tuple[Tensor, Tensor] | None = None,
) -> Tensor:
    """``[N, k + 1]`` node ids: each node itself, then k neighbours drawn with replacement.

    Isolated nodes repeat themselves; nodes with fewer than k neighbours repeat some.
    ``csr``: :func:`~graphnetz.models.sampling.to_csr` of this graph, if already built.
    """
    rowptr, col = to_csr(edge_index, num_nodes) if csr is None else csr
    nodes = torch.arange(num_nodes, device=edge_index.device)
    draws = random_neighbor(rowptr, col, nodes.unsqueeze(1).expand(num_nodes, k), generator)
    return torch.cat([nodes.unsqueeze(1), draws], dim=1)


def stacked_conv(conv: nn.Conv1d, h: Tensor, stack: Tensor, relu: bool = False) -> Tensor:
    """``conv`` along the stack of gathered rows, ``conv(h[stack].transpose(1, 2))``,
    returned as ``[N, L_out, out]`` without convolving the gathered stack; ``relu``
    applies a ReLU to it (see :func:`_bias_relu_`).

    Each kernel tap is a linear map of one row, so the K taps are applied once per
    node (one ``[N, in] x [in, K·out]`` product) and the results gathered and summed
    per stack position: K·N row products instead of K·N·L (L = k + 1, 11 for k = 10).
    Gather and sum are one ``embedding_bag`` (a bag of K table rows per output
    position; positions in the zero padding point at ``padding_idx``, which adds
    nothing), so no ``[N·L, out]`` intermediate per tap is materialised and the
    backward pass is one scatter-add into the table.
    """
    out_ch, _, taps = conv.weight.shape
    pad = conv.padding[0]
    n, length = stack.shape
    per_tap = h @ conv.weight.permute(1, 2, 0).reshape(h.size(1), taps * out_ch)
    table = torch.cat([per_tap.view(-1, out_ch), per_tap.new_zeros(1, out_ch)])  # row i·K + t
    zero_row = table.size(0) - 1
    # Output position l reads stack position l - pad + t with tap t.
    window = F.pad(stack, (pad, pad), value=-1).unfold(1, taps, 1)  # [n, L_out, K]
    tap = torch.arange(taps, device=stack.device)
    bags = torch.where(window >= 0, window * taps + tap, zero_row).reshape(-1, taps)
    out = F.embedding_bag(bags, table, mode="sum", padding_idx=zero_row)
    return _bias_relu_(out, conv.bias, relu).view(n, window.size(1), out_ch)


def _bias_relu_(out: Tensor, bias: Tensor, relu: bool) -> Tensor:
    """``out + bias``, then ReLU if ``relu``, written into ``out``: a fresh output whose
    producer's backward does not read it (an embedding bag, a convolution). On LANC's
    DBLP stacks each such tensor is 80 M values (323 MB): an out-of-place add or ReLU
    allocates (and, in deterministic runs, NaN-fills) another one. ``out`` must be the
    tensor itself, not a view: an in-place op on a view makes autograd clone the whole
    gradient of its base in the backward pass. The same values as out of place.
    """
    out.add_(bias)
    return out.relu_() if relu else out


def conv_along_stack(conv: nn.Conv1d, u: Tensor, relu: bool = False) -> Tensor:
    """``conv(u.transpose(1, 2)).transpose(1, 2)`` for ``u`` ``[n, L, C]``, in ``u``'s layout;
    ``relu`` applies a ReLU to it in place, on the kernel's output before any view of it
    (see :func:`_bias_relu_`).

    Run as a 2-D convolution of height 1 on the ``[n, C, 1, L]`` view: for a contiguous
    ``u`` (stack-major, as :func:`stacked_conv` returns it) that view is channels-last,
    which the oneDNN kernel takes as it is and answers in the same layout, so neither
    the input nor the output is transposed into a copy (a ``Conv1d`` wants channel-major
    input and returns channel-major output). The same sums up to float rounding.
    """
    out = F.conv2d(
        u.transpose(1, 2).unsqueeze(2),
        conv.weight.unsqueeze(2),
        conv.bias,
        stride=(1, conv.stride[0]),
        padding=(0, conv.padding[0]),
        dilation=(1, conv.dilation[0]),
    )
    if relu:
        out.relu_()
    return out.squeeze(2).transpose(1, 2)


def _conv1d_layout(u: Tensor) -> Tensor:
    """``u`` ``[n, L, C]`` stored channel-major, as a ``Conv1d`` output would be: dropout
    draws its mask in memory order, so this keeps the random draws of the ``Conv1d``
    formulation after the second and later convolutions."""
    return u.transpose(1, 2).contiguous().transpose(1, 2)


class LANC(GraphModel):
    """Per node: a stack [ego, k sampled neighbours] of projected features, a 1-D
    convolution along the stack, then each label's embedding attends over the
    convolved positions and scores its own context vector.

    h = ReLU(X W) [N, H]; S = dropout(h)[stack] -> [N, k+1, H]; ``num_layers``
    Conv1d(H, H, kernel) + ReLU along the stack -> U [N, L, H]; for label c with
    embedding e_c:
    α_c = softmax_l(U_l · e_c / √H), z_c = Σ_l α_cl U_l, logit_c = (z_c + h) · o_c + b_c.

    ``forward(..., output_nodes=mask_or_ids)`` returns only those nodes' logits (the task
    passes the train nodes when training): the stacks, dropout masks and first projection
    are still drawn and computed for all N nodes, so the random stream is the one of a
    full forward, but both convolutions and the label attention run on the chosen rows.

    Training draws a fresh stack each forward (global torch RNG, reseeded per run);
    eval uses a fixed stack from a generator seeded with ``eval_seed`` so predictions
    are deterministic. Dropout before the first convolution acts on h (one mask per
    node, shared by every stack slot it fills), which lets :func:`stacked_conv` apply
    the first convolution per node rather than per slot (about 11x fewer products for
    that layer); later convolutions keep the stack-major layout (:func:`conv_along_stack`,
    no transposed copies). Memory is O(N·(k+1)·H) per layer (the stack is gathered after the
    projection, instead of O(N·k·F) on raw features) plus O(N·C·(k+1)) for the
    attention; the per-label context vectors [N, C, H] are never materialised.
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
        num_neighbors: int = 10,
        kernel_size: int = 3,
        eval_seed: int = 0,
    ) -> None:
        super().__init__()
        if num_neighbors < 1:
            raise ValueError(f"LANC needs num_neighbors >= 1, got {num_neighbors}")
        if num_layers < 1:
            raise ValueError(f"LANC needs num_layers >= 1 convolutions, got {num_layers}")
        self.num_neighbors = num_neighbors
        self.dropout = dropout
        self.eval_seed = eval_seed
        self.project = nn.Linear(in_channels, hidden_channels)
        self.convs = nn.ModuleList(
            nn.Conv1d(hidden_channels, hidden_channels, kernel_size, padding=kernel_size // 2)
            for _ in range(num_layers)
        )
        self.label_embedding = nn.Parameter(torch.empty(out_channels, hidden_channels))
        self.label_out = nn.Parameter(torch.empty(out_channels, hidden_channels))
        self.label_bias = nn.Parameter(torch.zeros(out_channels))
        #: the graph's out-neighbour rows, sorted once per graph, not at every forward
        #: (on Synthetic1's 2.1 M edges the sort was a quarter of an epoch)
        self._csr = GraphCache()
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.project.reset_parameters()
        for conv in self.convs:
            conv.reset_parameters()
        nn.init.xavier_uniform_(self.label_embedding)
        nn.init.xavier_uniform_(self.label_out)
        nn.init.zeros_(self.label_bias)

    def forward(self, x: Tensor, edge_index: Tensor, output_nodes: Tensor | None = None) -> Tensor:
        num_nodes = x.size(0)
        generator = None
        if not self.training:
            generator = torch.Generator(device=x.device).manual_seed(self.eval_seed)
        csr = self._csr.get(edge_index, num_nodes, to_csr)
        stack = neighbour_stack(edge_index, num_nodes, self.num_neighbors, generator, csr)
        rows = selected_rows(output_nodes)
        if rows is not None:
            stack = stack[rows]
        x = input_dropout(x, self.dropout, self.training)
        # In-place ReLUs on fresh outputs whose producers' backward does not read them.
        h = linear(self.project, x).relu_()  # [N, H]: every node can sit in a chosen stack
        first, *rest = self.convs
        u = stacked_conv(first, dropout(h, self.dropout, self.training), stack, relu=True)
        for i, conv in enumerate(rest):  # u: [n, L, H], n = chosen rows
            u = u if i == 0 else _conv1d_layout(u)
            u = dropout_rows(u, self.dropout, self.training, num_nodes, rows)
            u = conv_along_stack(conv, u, relu=True)
        if rows is not None:
            h = h[rows]
        # Both label products in one [N·L, H] x [H, 2C] matrix product (not N small ones).
        # (Σ_l α_cl U_l) · o_c == Σ_l α_cl (U_l · o_c): never materialise z [N, C, H].
        c = self.label_embedding.size(0)
        both = u.reshape(-1, u.size(-1)) @ torch.cat([self.label_embedding, self.label_out]).t()
        scores, per_position = both.view(*u.shape[:2], 2 * c).split(c, dim=-1)  # [n, L, C] each
        attention = (scores / u.size(-1) ** 0.5).softmax(dim=1)  # over the stack positions
        context_logit = (attention * per_position).sum(1)
        return context_logit + h @ self.label_out.t() + self.label_bias
