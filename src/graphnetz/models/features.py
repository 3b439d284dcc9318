"""Node features that may be sparse (one-hot node ids of featureless graphs, e.g. BlogCatalog).

A dense identity for 10k nodes is ~400 MB; models take the sparse COO matrix instead and
use these helpers where a plain op would densify or fail.

Also the helpers of models that compute chosen rows only (``output_nodes``: the train
nodes in a training step) with the random draws of a full forward.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from graphnetz.models.bernoulli import bernoulli_, dropout


def input_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """``F.dropout`` that also takes sparse COO features (BlogCatalog's one-hot node ids).

    On a sparse ``x`` only stored entries can be dropped; zeros stay zero either way, so
    this is dense dropout without densifying.
    """
    if not x.is_sparse:
        return dropout(x, p, training)
    x = x.coalesce()
    values = dropout(x.values(), p, training)
    return torch.sparse_coo_tensor(
        x.indices(), values, x.shape, is_coalesced=True, check_invariants=False
    )


def linear(layer: nn.Linear, x: Tensor) -> Tensor:
    """``layer(x)`` for dense or sparse COO ``x`` (sparse: one sparse-dense product)."""
    if not x.is_sparse:
        return layer(x)
    out = torch.sparse.mm(x, layer.weight.t())
    return out if layer.bias is None else out + layer.bias


def selected_rows(output_nodes: Tensor | None) -> Tensor | None:
    """Node ids from a bool mask or an id tensor (``None``: every node)."""
    if output_nodes is None or output_nodes.dtype != torch.bool:
        return output_nodes
    return output_nodes.nonzero().squeeze(1)


def dropout_rows(u: Tensor, p: float, training: bool, num_rows: int, rows: Tensor | None) -> Tensor:
    """``F.dropout(u_all, p, training)[rows]`` for ``u = u_all[rows]``, where ``u_all`` has
    ``num_rows`` rows and the same memory layout as ``u`` (a transpose or contiguous).

    The mask is drawn for all ``num_rows`` rows, in the layout ``F.dropout`` gives it, so
    the random stream (and every later draw) does not depend on which rows are computed:
    training on the train rows only gives the same numbers as training on all of them.
    """
    if rows is None or not training or p == 0.0:
        return dropout(u, p, training)
    if p == 1.0:
        return u * 0.0
    order = sorted(range(u.dim()), key=lambda d: -u.stride(d))  # outermost dim first
    shape = [num_rows, *u.shape[1:]]
    noise = u.new_empty([shape[d] for d in order]).permute(
        *sorted(range(u.dim()), key=order.__getitem__)
    )
    return u * bernoulli_(noise, 1 - p)[rows].div_(1 - p)


def is_one_hot_ids(x: Tensor) -> bool:
    """Whether ``x`` is an identity matrix (one-hot node ids), sparse COO or dense."""
    if x.dim() != 2 or x.size(0) != x.size(1):
        return False
    if x.is_sparse:
        x = x.coalesce()
        idx = x.indices()
        return (
            idx.size(1) == x.size(0)
            and bool((idx[0] == idx[1]).all())
            and bool((x.values() == 1).all())
        )
    return bool((x.diagonal() == 1).all()) and int(torch.count_nonzero(x)) == x.size(0)


def embedding_decay_warning(
    x: Tensor | None, weight_decay: float, n_train: int | None = None
) -> str | None:
    """A warning when one-hot node ids meet Adam's coupled L2 weight decay strong enough
    to pin them, else None.

    On one-hot ids the first layer is a per-node embedding: each row's loss gradient is
    about 1/N_train of the loss's, so the decay ``weight_decay * w`` outweighs it once
    ``weight_decay * N_train >= 1``: the rows stay near zero and message-passing models
    stay at the label prior (BlogCatalog, ~6k training nodes at 5e-4: 3.1, measured at
    the prior in docs/multilabel.md), while below that they learn (Karate, 20 training
    nodes at 5e-4: 0.01, GCN 0.90 test accuracy). ``n_train=None`` (unknown) warns.
    """
    if x is None or weight_decay <= 0 or not is_one_hot_ids(x):
        return None
    if n_train is not None and weight_decay * n_train < 1:
        return None
    scale = (
        ""
        if n_train is None
        else f" (x {n_train} training nodes = {weight_decay * n_train:.2g} >= 1)"
    )
    return (
        f"node features are one-hot node ids (a learnable per-node embedding) and "
        f"task.weight_decay={weight_decay:g}{scale} is coupled L2 (Adam, SGD; not AdamW): it outweighs each "
        f"row's gradient, and models that learn from these embeddings (GCN, GAT, SAGE, "
        f"H2GCN, GCN-LPA, LANC) can stay at the label prior. task.weight_decay=0 lets "
        f"them learn (docs/multilabel.md, 'BlogCatalog and weight decay')."
    )
