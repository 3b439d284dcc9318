"""Node features that may be sparse (one-hot node ids of featureless graphs, e.g. BlogCatalog).

A dense identity for 10k nodes is ~400 MB; models take the sparse COO matrix instead and
use these helpers where a plain op would densify or fail.

Also the helpers of models that compute chosen rows only (``output_nodes``: the train
nodes in a training step) with the random draws of a full forward.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def input_dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """``F.dropout`` that also takes sparse COO features (BlogCatalog's one-hot node ids).

    On a sparse ``x`` only stored entries can be dropped; zeros stay zero either way, so
    this is dense dropout without densifying.
    """
    if not x.is_sparse:
        return F.dropout(x, p, training)
    x = x.coalesce()
    values = F.dropout(x.values(), p, training)
    return torch.sparse_coo_tensor(x.indices(), values, x.shape, is_coalesced=True,
                                   check_invariants=False)


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
        return F.dropout(u, p, training)
    if p == 1.0:
        return u * 0.0
    order = sorted(range(u.dim()), key=lambda d: -u.stride(d))  # outermost dim first
    shape = [num_rows, *u.shape[1:]]
    noise = u.new_empty([shape[d] for d in order]).permute(*sorted(range(u.dim()), key=order.__getitem__))
    return u * noise.bernoulli_(1 - p)[rows].div_(1 - p)
