"""Synthetic multi-label graphs with tunable homophily (the multi-label study's generator).

Stage 1, points: ``point_model="mldatagen"`` (default) is Mldatagen's hypersphere strategy
as it produced the study's Synthetic1 (:mod:`graphnetz.data.mldatagen`): label spheres
inside the unit sphere, centres and points drawn coordinate by coordinate, N_k ∝ r_k points
per sphere, each point's coordinates written in a random order, labels = owner sphere +
every sphere containing the written point. With 20 labels the radii default to the study's
own (``radii="synthetic1"``, recovered from its released rows), otherwise they are drawn
U(radius_range) from ``sphere_seed``. ``point_model="uniform"`` is the earlier model: each
point picks a sphere uniformly, is drawn uniformly inside it, and its label set is every
sphere that contains it. Optional irrelevant features ~ U(−1, 1) are appended. Feature
quality r keeps round(r·F) of the F relevant coordinates (a seeded choice) and replaces the
others by fresh U(−1, 1) noise columns, so the input width stays F + irrelevant for every
r; r = 0 leaves *only* noise, i.e. the features carry no label information.

Stage 2, edges (social-distance attachment, Boguñá et al. 2004): each unordered pair
i < j is linked independently with p_ij = 1 / (1 + (d_ij / b)^α), d_ij the Hamming distance
of the label vectors divided by C. Identical label sets always link (p = 1); b is the
distance where p = ½ (larger b ⇒ denser); larger α sharpens the step at b (⇒ higher
homophily while b is below the typical distance). Pairs are sampled in row blocks of at
most ~1M entries, so no dense n × n float matrix exists at once.

Everything is drawn from ``numpy.random.default_rng(seed)``: same arguments ⇒ same graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data

from .mldatagen import SYNTHETIC1_SPHERE_SIZES, mldatagen_points, resolve_radii
from .multilabel import random_split_masks, undirected_edge_index

BLOCK_ENTRIES = 1 << 20  # pairs per sampling block (≈ 8 MB per float64 array)
POINT_MODELS = ("mldatagen", "uniform")


def hypersphere_points(
    num_nodes: int,
    num_features: int,
    num_labels: int,
    rng: np.random.Generator,
    radius_range: tuple[float, float] = (0.2, 0.75),
    sphere_rng: np.random.Generator | None = None,
    radii: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Points, labels, label-sphere centres and radii of the uniform hypersphere model.

    The spheres are drawn from ``sphere_rng`` (default: ``rng``), the points from ``rng``;
    ``radii`` (one per label) replaces the U(radius_range) draw.

    Returns ``x [N, F]``, ``y [N, C]`` (bool), ``centres [C, F]``, ``radii [C]``.
    """
    lo, hi = radius_range
    if not 0 < lo <= hi < 1:
        raise ValueError(f"radius_range must satisfy 0 < low <= high < 1, got {radius_range}")
    if min(num_nodes, num_features, num_labels) < 1:
        raise ValueError("num_nodes, num_features and num_labels must all be >= 1")

    def ball(count: int, radius: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        # uniform in a ball: Gaussian direction, radius · U^(1/F)
        direction = gen.standard_normal((count, num_features))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        return direction * (radius * gen.random(count) ** (1.0 / num_features))[:, None]

    sphere_rng = rng if sphere_rng is None else sphere_rng
    radii = sphere_rng.uniform(lo, hi, num_labels) if radii is None else np.asarray(radii)
    centres = ball(num_labels, 1.0 - radii, sphere_rng)
    owner = rng.integers(num_labels, size=num_nodes)
    # shrink by 1e-9 so the owner sphere contains its point despite rounding
    x = centres[owner] + ball(num_nodes, radii[owner] * (1 - 1e-9), rng)
    dist = np.linalg.norm(x[:, None, :] - centres[None, :, :], axis=2)
    return x, dist <= radii[None, :], centres, radii


def sample_points(
    num_nodes: int,
    num_features: int,
    num_labels: int,
    rng: np.random.Generator,
    sphere_rng: np.random.Generator,
    *,
    point_model: str = "mldatagen",
    radii: str | Sequence[float] | None = None,
    radius_range: tuple[float, float] = (0.2, 0.75),
) -> dict[str, np.ndarray]:
    """Stage 1: ``points [N, F]``, ``y [N, C]`` (bool), ``centres [C, F]``, ``radii [C]``.

    ``radii=None`` means "synthetic1" (the study's radii) for ``point_model="mldatagen"``
    with 20 labels, and "drawn" (U(radius_range) from ``sphere_rng``) otherwise.
    """
    if point_model not in POINT_MODELS:
        raise ValueError(f"point_model must be one of {POINT_MODELS}, got {point_model!r}")
    if min(num_nodes, num_features, num_labels) < 1:
        raise ValueError("num_nodes, num_features and num_labels must all be >= 1")
    if radii is None:
        study = point_model == "mldatagen" and num_labels == len(SYNTHETIC1_SPHERE_SIZES)
        radii = "synthetic1" if study else "drawn"
    if point_model == "uniform":
        fixed = None  # "drawn": hypersphere_points draws them (its original random stream)
        if radii != "drawn":
            fixed = resolve_radii(radii, num_labels, tuple(radius_range), sphere_rng)
        x, y, centres, r = hypersphere_points(
            num_nodes, num_features, num_labels, rng, tuple(radius_range), sphere_rng, fixed
        )
        return {"points": x, "y": y, "centres": centres, "radii": r}
    r = resolve_radii(radii, num_labels, tuple(radius_range), sphere_rng)
    drawn = mldatagen_points(num_nodes, num_features, r, rng, sphere_rng)
    return {"points": drawn["x"], "y": drawn["y"], "centres": drawn["centres"], "radii": r}


def attachment_probability(distance: np.ndarray, alpha: float, b: float) -> np.ndarray:
    """p = 1 / (1 + (d / b)^α); p(0) = 1, p(b) = ½."""
    with np.errstate(over="ignore", divide="ignore"):
        return 1.0 / (1.0 + (distance / b) ** alpha)


def social_distance_edges(
    y: np.ndarray, alpha: float, b: float, rng: np.random.Generator
) -> np.ndarray:
    """Undirected pairs ``[2, M]`` (i < j) drawn with p_ij from normalised Hamming distance.

    Row block [s, e) is compared against columns j > s only; a block holds at most
    ``BLOCK_ENTRIES`` pairs, so working memory is O(BLOCK_ENTRIES + n) plus the edges found.
    """
    if alpha <= 0 or b <= 0:
        raise ValueError(f"alpha and b must be > 0, got alpha={alpha}, b={b}")
    n, num_labels = y.shape
    yf = y.astype(np.float64)
    sizes = yf.sum(1)
    rows = max(1, BLOCK_ENTRIES // max(n, 1))
    found = []
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        cols = np.arange(start + 1, n)
        hamming = sizes[start:stop, None] + sizes[None, cols] - 2.0 * (yf[start:stop] @ yf[cols].T)
        p = attachment_probability(hamming / num_labels, alpha, b)
        upper = cols[None, :] > np.arange(start, stop)[:, None]
        i, j = np.nonzero((rng.random(p.shape) < p) & upper)
        found.append(np.stack([i + start, cols[j]]))
    return np.concatenate(found, axis=1) if found else np.zeros((2, 0), np.int64)


def generate_ml_graph(
    *,
    seed: int,
    num_nodes: int = 3000,
    num_features: int = 10,
    num_labels: int = 20,
    alpha: float = 4.0,
    b: float = 0.05,
    irrelevant_features: int = 0,
    feature_quality: float = 1.0,
    radius_range: tuple[float, float] = (0.2, 0.75),
    sphere_seed: int = 0,
    point_model: str = "mldatagen",
    radii: str | Sequence[float] | None = None,
) -> dict[str, Any]:
    """The raw generator output: ``x``, ``y``, ``edges`` (i < j), ``centres``, ``radii``.

    The label spheres (the label model) come from ``sphere_seed`` and stay fixed across
    run seeds, like a fixed dataset; points, feature choice and edges come from ``seed``.
    ``point_model`` and ``radii`` are those of :func:`sample_points`.
    """
    if not 0.0 <= feature_quality <= 1.0:
        raise ValueError(f"feature_quality must lie in [0, 1], got {feature_quality}")
    if irrelevant_features < 0:
        raise ValueError(f"irrelevant_features must be >= 0, got {irrelevant_features}")
    rng = np.random.default_rng(seed)
    stage = sample_points(
        num_nodes,
        num_features,
        num_labels,
        rng,
        np.random.default_rng(sphere_seed),
        point_model=point_model,
        radii=radii,
        radius_range=radius_range,
    )
    points, y = stage["points"], stage["y"]
    kept = np.sort(rng.permutation(num_features)[: int(round(feature_quality * num_features))])
    noise = rng.uniform(-1.0, 1.0, (num_nodes, num_features - kept.size + irrelevant_features))
    x = np.concatenate([points[:, kept], noise], axis=1)
    edges = social_distance_edges(y, alpha, b, rng)
    return {
        "x": x,
        "y": y,
        "edges": edges,
        "points": points,
        "centres": stage["centres"],
        "radii": stage["radii"],
        "kept_features": kept,
    }


def load_ml_synthetic(
    root: str | None = None,
    mirror=None,
    *,
    seed: int,
    num_nodes: int = 3000,
    num_features: int = 10,
    num_labels: int = 20,
    alpha: float = 4.0,
    b: float = 0.05,
    irrelevant_features: int = 0,
    feature_quality: float = 1.0,
    radius_range: tuple[float, float] = (0.2, 0.75),
    sphere_seed: int = 0,
    point_model: str = "mldatagen",
    radii: str | Sequence[float] | None = None,
) -> Data:
    """A seeded synthetic multi-label graph as a ``Data`` (loader contract of §7).

    ``root``/``mirror`` are accepted for the common loader signature and unused (nothing
    is read or written). The split is a seeded 60/20/20 random split (one column).
    Defaults α = 4, b = 0.05 give a mid homophily (≈ 0.60, ≈ 208k edges at 3000 nodes);
    MLGNC's Hyperspheres_10_10_0 graph used α = 8.8, b = 0.12 (its info.txt), where the
    default points give homophily 0.36–0.39 and ≈ 1.05M edges (published: 0.3768, ≈ 1.0M).
    """
    g = generate_ml_graph(
        seed=seed,
        num_nodes=num_nodes,
        num_features=num_features,
        num_labels=num_labels,
        alpha=alpha,
        b=b,
        irrelevant_features=irrelevant_features,
        feature_quality=feature_quality,
        radius_range=radius_range,
        sphere_seed=sphere_seed,
        point_model=point_model,
        radii=radii,
    )
    edge_index = undirected_edge_index(g["edges"][0], g["edges"][1], num_nodes)
    note = (
        f"given: {g['kept_features'].size} of {num_features} relevant hypersphere "
        f"coordinates ({point_model} points, feature_quality={feature_quality}) + "
        f"{g['x'].shape[1] - g['kept_features'].size} U(-1,1) noise columns"
    )
    return Data(
        x=torch.from_numpy(g["x"].astype(np.float32)),
        edge_index=edge_index,
        y=torch.from_numpy(g["y"].astype(np.float32)),
        feature_note=note,
        num_nodes=num_nodes,
        **random_split_masks(num_nodes, seed),
    )


DEFAULT_B_CANDIDATES = (0.12, 0.08, 0.05, 0.03, 0.02, 0.01)


def find_alpha_b(
    target_homophily: float,
    b: float | Sequence[float] | None = None,
    *,
    num_nodes: int = 1000,
    seed: int = 0,
    sphere_seed: int = 0,
    alpha_range: tuple[float, float] = (0.05, 64.0),
    tol: float = 0.005,
    max_iter: int = 40,
    **generator_kwargs: Any,
) -> tuple[float, float, float]:
    """Find (α, b) whose graphs have label homophily ≈ ``target_homophily``.

    Method: one seeded label sample of ``num_nodes`` points (homophily is a mean over
    edges and p_ij does not depend on n, so a 1000-node subsample estimates the
    3000-node value); all pair distances and one uniform draw per pair are fixed (common
    random numbers), so homophily(α) is a smooth curve, and bisection on log α finds the
    target. ``b`` may be one value or several candidates (default
    :data:`DEFAULT_B_CANDIDATES`); among the b whose reachable interval
    [h(α_min), h(α_max)] holds the target, the one with the fewest expected edges wins.
    The label spheres come from ``sphere_seed`` exactly as in :func:`generate_ml_graph`,
    so the answer transfers to every run seed. α → 0 gives ≈ the random-pair baseline
    (lower targets are unreachable: the model cannot make heterophilous graphs); a
    smaller b reaches higher homophily. Returns ``(alpha, b, measured_homophily)``.
    """
    kwargs = {
        "num_features": 10,
        "num_labels": 20,
        "radius_range": (0.2, 0.75),
        "point_model": "mldatagen",
        "radii": None,
    }
    unknown = set(generator_kwargs) - set(kwargs)
    if unknown:
        raise ValueError(
            f"unknown generator arguments {sorted(unknown)}; allowed: {sorted(kwargs)}"
        )
    kwargs.update(generator_kwargs)
    rng = np.random.default_rng(seed)
    y = sample_points(
        num_nodes,
        kwargs.pop("num_features"),
        kwargs.pop("num_labels"),
        rng,
        np.random.default_rng(sphere_seed),
        **kwargs,
    )["y"]
    i, j = np.triu_indices(num_nodes, k=1)
    yf = y.astype(np.float64)
    sizes = yf.sum(1)
    inter = np.einsum("ec,ec->e", yf[i], yf[j])
    jaccard = inter / (sizes[i] + sizes[j] - inter)  # every node has >= 1 label
    distance = (sizes[i] + sizes[j] - 2 * inter) / y.shape[1]
    u = rng.random(i.size)

    def homophily(alpha: float, b_value: float) -> float:
        linked = u < attachment_probability(distance, alpha, b_value)
        return float(jaccard[linked].mean()) if linked.any() else float("nan")

    candidates = DEFAULT_B_CANDIDATES if b is None else np.atleast_1d(b).tolist()
    reachable, solutions = [], []
    for b_value in candidates:
        lo, hi = np.log(alpha_range[0]), np.log(alpha_range[1])
        h_lo, h_hi = homophily(np.exp(lo), b_value), homophily(np.exp(hi), b_value)
        reachable.append(f"b={b_value}: [{h_lo:.3f}, {h_hi:.3f}]")
        if not h_lo - tol <= target_homophily <= h_hi + tol:
            continue
        mid, h_mid = hi, h_hi
        for _ in range(max_iter):
            mid = (lo + hi) / 2
            h_mid = homophily(np.exp(mid), b_value)
            if abs(h_mid - target_homophily) <= tol:
                break
            lo, hi = (mid, hi) if h_mid < target_homophily else (lo, mid)
        edges = float(attachment_probability(distance, np.exp(mid), b_value).sum())
        solutions.append((edges, float(np.exp(mid)), float(b_value), h_mid))
    if solutions:  # among the b that reach the target, the sparsest graph wins
        _, alpha, b_best, h_best = min(solutions)
        return alpha, b_best, h_best
    raise ValueError(
        f"target_homophily={target_homophily} is not reachable with alpha in {alpha_range}; "
        f"reachable homophily per b: {'; '.join(reachable)}. Try a smaller b for higher "
        "homophily; values below the alpha→0 baseline are impossible with this model"
    )


__all__ = [
    "attachment_probability",
    "find_alpha_b",
    "generate_ml_graph",
    "hypersphere_points",
    "load_ml_synthetic",
    "sample_points",
    "social_distance_edges",
]
