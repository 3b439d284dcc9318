"""LANC: label-attentive neighbourhood convolution (after Zhou et al., 2020)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.contract import GraphModel
from graphnetz.models.features import dropout_rows, input_dropout, linear, selected_rows
from graphnetz.models.sampling import random_neighbor, to_csr


def neighbour_stack(
    edge_index: Tensor, num_nodes: int, k: int, generator: torch.Generator | None = None
) -> Tensor:
    """``[N, k + 1]`` node ids: each node itself, then k neighbours drawn with replacement.

    Isolated nodes repeat themselves; nodes with fewer than k neighbours repeat some.
    """
    rowptr, col = to_csr(edge_index, num_nodes)
    nodes = torch.arange(num_nodes, device=edge_index.device)
    draws = random_neighbor(rowptr, col, nodes.unsqueeze(1).expand(num_nodes, k), generator)
    return torch.cat([nodes.unsqueeze(1), draws], dim=1)


def stacked_conv(conv: nn.Conv1d, h: Tensor, stack: Tensor) -> Tensor:
    """``conv`` along the stack of gathered rows, ``conv(h[stack].transpose(1, 2))``,
    returned as ``[N, L_out, out]`` without convolving the gathered stack.

    Each kernel tap is a linear map of one row, so the K taps are applied once per
    node (one ``[N, in] x [in, K·out]`` product) and the results gathered and summed
    per stack position: K·N row products instead of K·N·L (L = k + 1, 11 for k = 10).
    Positions in the zero padding read an appended zero row. Only gathers and
    out-of-place sums, so the backward pass is index_add, not copies of strided views.
    """
    out_ch, _, taps = conv.weight.shape
    pad = conv.padding[0]
    n, length = stack.shape
    per_tap = h @ conv.weight.permute(1, 2, 0).reshape(h.size(1), taps * out_ch)
    table = torch.cat([per_tap.view(-1, out_ch), per_tap.new_zeros(1, out_ch)])  # row i·K + t
    zero_row = table.size(0) - 1
    padded = F.pad(stack, (pad, pad), value=-1)
    out_length = length + 2 * pad - taps + 1
    out = conv.bias
    for t in range(taps):  # output position l reads stack position l - pad + t
        pos = padded[:, t : t + out_length]
        rows = torch.where(pos >= 0, pos * taps + t, zero_row).reshape(-1)
        out = out + table.index_select(0, rows).view(n, out_length, out_ch)
    return out


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
    that layer). Memory is O(N·(k+1)·H) per layer (the stack is gathered after the
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
        stack = neighbour_stack(edge_index, num_nodes, self.num_neighbors, generator)
        rows = selected_rows(output_nodes)
        if rows is not None:
            stack = stack[rows]
        x = input_dropout(x, self.dropout, self.training)
        h = F.relu(linear(self.project, x))  # [N, H]: every node can sit in a chosen stack
        first, *rest = self.convs
        u = F.relu(stacked_conv(first, F.dropout(h, self.dropout, self.training), stack))
        u = u.transpose(1, 2)  # [n, H, L], n = chosen rows
        for conv in rest:
            u = F.relu(conv(dropout_rows(u, self.dropout, self.training, num_nodes, rows)))
        u = u.transpose(1, 2)  # [n, L, H]
        if rows is not None:
            h = h[rows]
        # Both label products in one [N·L, H] x [H, 2C] matrix product (not N small ones).
        # (Σ_l α_cl U_l) · o_c == Σ_l α_cl (U_l · o_c): never materialise z [N, C, H].
        c = self.label_embedding.size(0)
        both = u.reshape(-1, u.size(-1)) @ torch.cat([self.label_embedding, self.label_out]).t()
        scores, per_position = both.view(u.size(0), -1, 2 * c).split(c, dim=-1)  # [n, L, C] each
        attention = (scores / u.size(-1) ** 0.5).softmax(dim=1)  # over the stack positions
        context_logit = (attention * per_position).sum(1)
        return context_logit + h @ self.label_out.t() + self.label_bias
