"""Multi-label homophily and cross-class neighbourhood similarity (CCNS).

Pure, vectorised functions: tensors/arrays in, numbers/arrays out. Conventions:

* ``edge_index`` is a ``[2, E]`` integer array; column ``(j, i)`` is the edge j → i.
  For an undirected graph stored in both directions (the loaders' contract) every mean
  over columns equals the mean over undirected edges, since each pair appears twice.
* ``y`` is an ``[N, C]`` 0/1 label matrix; ``ℓ(i)`` is the set of columns where row i is 1.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

ArrayLike = torch.Tensor | np.ndarray

#: Jaccard(∅, ∅): two unlabelled endpoints have *identical* (empty) label sets, so we count
#: the edge as fully homophilous. Pass ``empty_value=0.0`` for the pessimistic convention or
#: ``float("nan")`` to leave such edges out of the mean.
EMPTY_JACCARD = 1.0


def _as_numpy(a: ArrayLike) -> np.ndarray:
    if isinstance(a, torch.Tensor):
        a = a.detach().cpu()
        if a.is_sparse:
            a = a.to_dense()
        return a.numpy()
    return np.asarray(a)


def _validate(edge_index: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    ei = _as_numpy(edge_index).astype(np.int64, copy=False)
    yy = _as_numpy(y)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(f"edge_index must have shape [2, E], got {list(ei.shape)}")
    if yy.ndim != 2:
        raise ValueError(f"y must be an [N, C] 0/1 label matrix, got shape {list(yy.shape)}")
    if ei.size and (ei.min() < 0 or ei.max() >= yy.shape[0]):
        bad = int(ei.min()) if ei.min() < 0 else int(ei.max())
        raise ValueError(
            f"edge_index refers to node {bad} but y has rows 0..{yy.shape[0] - 1} only"
        )
    if not np.isin(yy, (0, 1)).all():
        raise ValueError("y must contain only 0 and 1 (a multi-hot label matrix)")
    return ei, yy.astype(np.float64, copy=False)


#: Edges per block when counting shared labels: two [block, C] gathers at a time, not
#: [E, C] (Yelp's 14 M edge columns x 100 labels would be 22 GB of float64).
EDGE_BLOCK = 1 << 16


def _shared_labels(yy: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """|ℓ(i) ∩ ℓ(j)| per edge column, in blocks of :data:`EDGE_BLOCK` edges."""
    inter = np.zeros(src.size)
    for start in range(0, src.size, EDGE_BLOCK):
        block = slice(start, start + EDGE_BLOCK)
        inter[block] = np.einsum("ec,ec->e", yy[src[block]], yy[dst[block]])
    return inter


def edge_jaccard(
    edge_index: ArrayLike, y: ArrayLike, empty_value: float = EMPTY_JACCARD
) -> np.ndarray:
    """Jaccard(ℓ(i), ℓ(j)) = |ℓ(i) ∩ ℓ(j)| / |ℓ(i) ∪ ℓ(j)| for every edge column.

    Edges whose two endpoints are both unlabelled get ``empty_value``.
    """
    ei, yy = _validate(edge_index, y)
    src, dst = ei
    inter = _shared_labels(yy, src, dst)
    sizes = yy.sum(1)
    union = sizes[src] + sizes[dst] - inter
    out = np.full(inter.shape, float(empty_value))
    np.divide(inter, union, out=out, where=union > 0)
    return out


def label_homophily(
    edge_index: ArrayLike, y: ArrayLike, empty_value: float = EMPTY_JACCARD
) -> float:
    """Label homophily h = (1/|E|) Σ_{(i,j)∈E} Jaccard(ℓ(i), ℓ(j)).

    Jaccard(∅, ∅) = ``empty_value`` (1.0 by default, see :data:`EMPTY_JACCARD`; NaN drops
    those edges). A graph without edges has undefined homophily and returns NaN.
    """
    jac = edge_jaccard(edge_index, y, empty_value)
    if np.isnan(empty_value):
        jac = jac[~np.isnan(jac)]
    return float(jac.mean()) if jac.size else float("nan")


def neighbour_label_counts(edge_index: ArrayLike, y: ArrayLike) -> np.ndarray:
    """d_i ∈ ℝ^C: per class, how many in-neighbours j (edges j → i) carry that class (A·Y)."""
    ei, yy = _validate(edge_index, y)
    n = yy.shape[0]
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[1], ei[0])), shape=(n, n))
    return np.asarray(adj @ yy)


def multilabel_ccns(edge_index: ArrayLike, y: ArrayLike) -> np.ndarray:
    """Multi-label cross-class neighbourhood similarity, a C × C matrix.

    s(c, c′) = 1/(|V_c||V_c′|) Σ_{i∈V_c, j∈V_c′, i≠j} cos(d_i, d_j) / (|ℓ(i)||ℓ(j)|)

    with d_i the neighbour-label counts (:func:`neighbour_label_counts`). cos(·, 0) = 0
    (a node without labelled neighbours is similar to nothing). Classes without nodes
    give NaN rows/columns.

    Vectorised as a rank-N product: with u_i = d_i/‖d_i‖ and w_i = 1/|ℓ(i)|,
    Σ_{i,j} = (Yᵀ W U)(Yᵀ W U)ᵀ, minus the diagonal i = j terms Yᵀ diag(w_i² ‖u_i‖²) Y.
    Memory is O(N·C + C²), so 10⁵-node graphs are fine.
    """
    _, yy = _validate(edge_index, y)
    d = neighbour_label_counts(edge_index, y)
    norm = np.linalg.norm(d, axis=1)
    u = np.divide(d, norm[:, None], out=np.zeros_like(d), where=norm[:, None] > 0)
    sizes = yy.sum(1)
    w = np.divide(1.0, sizes, out=np.zeros_like(sizes), where=sizes > 0)
    m = yy.T @ (w[:, None] * u)  # C × C: Σ_i y_ic w_i u_i
    total = m @ m.T
    self_terms = yy.T @ ((w**2 * (norm > 0))[:, None] * yy)  # ‖u_i‖² ∈ {0, 1}
    counts = yy.sum(0)
    denom = np.outer(counts, counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (total - self_terms) / denom, np.nan)
