"""Node features that may be sparse (one-hot node ids of featureless graphs, e.g. BlogCatalog).

A dense identity for 10k nodes is ~400 MB; models take the sparse COO matrix instead and
use these helpers where a plain op would densify or fail.
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
