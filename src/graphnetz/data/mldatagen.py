"""Mldatagen's hypersphere strategy as it produced the study's Synthetic1 (Tomás et al., 2014).

Read off the released Synthetic1 (MLGNC ``Hyperspheres_10_10_0``; docs/multilabel.md):

1. Label sphere k has radius r_k and a centre drawn *coordinate by coordinate* in a random
   order, each coordinate U(−ℓ, ℓ) with ℓ² = (1 − r_k)² − (sum of the squares drawn so far),
   so the sphere lies inside the unit sphere (and, in 10 dimensions, touches it nearly).
2. Sphere k owns N_k ∝ r_k points (largest-remainder rounding to N); rows are grouped by
   owner in sphere order, as in the released files.
3. A point is drawn inside its owner sphere the same coordinate-by-coordinate way.
4. Each point's coordinates are then *written in a random order* (one permutation per
   point), and its labels are its owner plus every sphere that contains the *written* point.
   So the owner label is kept by construction while the other labels follow the scrambled
   coordinates; the written features sit in the owner sphere only up to a permutation.

The study's Synthetic1 is one draw of this model, and its label statistics depend strongly
on the radii drawn (homophily sd ≈ 0.04 across radius draws at α = 8.8, b = 0.12). The
released rows give those radii back: N_k is the size of sphere k's block of rows and, by
step 2, N_k = N r_k / Σ r; Σ r = 10.09 follows from fitting the boundaries of the 12
spheres that hold enough non-owner points (each fit reproduces its label to ≥ 99.6 %).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# rows per owner sphere (labels y1 … y20) in the released Hyperspheres_10_10_0/labels.csv
SYNTHETIC1_SPHERE_SIZES = (
    198, 122, 137, 84, 70, 180, 238, 103, 149, 231,
    153, 97, 85, 174, 155, 233, 65, 219, 181, 126,
)  # fmt: skip
SYNTHETIC1_RADIUS_SUM = 10.09  # Σ r_k, from 12 sphere-boundary fits (N_k / r_k = 297 ± 2)
RADII_CHOICES = ("synthetic1", "drawn")


def synthetic1_radii() -> np.ndarray:
    """The 20 label-sphere radii of the study's Synthetic1, r_k = N_k · Σr / N."""
    sizes = np.asarray(SYNTHETIC1_SPHERE_SIZES, dtype=float)
    return sizes * SYNTHETIC1_RADIUS_SUM / sizes.sum()


def resolve_radii(
    radii: str | Sequence[float] | None,
    num_labels: int,
    radius_range: tuple[float, float],
    sphere_rng: np.random.Generator,
) -> np.ndarray:
    """Radii for ``radii`` = "synthetic1", "drawn" (U(radius_range)) or ``num_labels`` values."""
    if isinstance(radii, str):
        if radii not in RADII_CHOICES:
            raise ValueError(f"radii must be one of {RADII_CHOICES} or a list, got {radii!r}")
        if radii == "synthetic1":
            if num_labels != len(SYNTHETIC1_SPHERE_SIZES):
                raise ValueError(
                    f"radii='synthetic1' holds the study's {len(SYNTHETIC1_SPHERE_SIZES)} "
                    f"label spheres, but num_labels={num_labels}; use radii='drawn' or "
                    f"{num_labels} explicit radii"
                )
            return synthetic1_radii()
        lo, hi = radius_range
        if not 0 < lo <= hi < 1:
            raise ValueError(f"radius_range must satisfy 0 < low <= high < 1, got {radius_range}")
        return sphere_rng.uniform(lo, hi, num_labels)
    values = np.asarray(radii, dtype=float)
    if values.shape != (num_labels,) or not ((values > 0) & (values < 1)).all():
        raise ValueError(
            f"radii must be {num_labels} values in (0, 1) (one per label), got {radii!r}"
        )
    return values


def coordinatewise_ball(
    centres: np.ndarray, radii: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """One point per row inside ball(centre, radius), drawn Mldatagen's way.

    Coordinates are filled in a random order per row, each U(−ℓ, ℓ) around the centre with
    ℓ² = radius² − (squared offset so far): inside the ball, but not uniform in it (the
    first coordinates take most of the radius).
    """
    n, dim = centres.shape
    order = np.argsort(rng.random((n, dim)), axis=1)
    offset = np.zeros((n, dim))
    rows = np.arange(n)
    for step in range(dim):
        room = np.sqrt(np.maximum(radii**2 - (offset**2).sum(axis=1), 0.0))
        offset[rows, order[:, step]] = rng.uniform(-room, room)
    return centres + offset


def points_per_sphere(num_nodes: int, radii: np.ndarray) -> np.ndarray:
    """N_k ∝ r_k, rounded by largest remainders so that the counts sum to ``num_nodes``."""
    quota = num_nodes * radii / radii.sum()
    counts = np.floor(quota).astype(int)
    short = num_nodes - counts.sum()
    counts[np.argsort(counts - quota, kind="stable")[:short]] += 1
    return counts


def mldatagen_points(
    num_nodes: int,
    num_features: int,
    radii: np.ndarray,
    rng: np.random.Generator,
    sphere_rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Written points ``x [N, F]``, labels ``y [N, C]``, ``centres``, ``owner``, ``drawn``.

    Centres come from ``sphere_rng``; points, their write-out order and so the labels from
    ``rng``. ``drawn`` are the points before the write-out permutation (inside the owner).
    """
    if min(num_nodes, num_features) < 1:
        raise ValueError("num_nodes and num_features must be >= 1")
    num_labels = radii.size
    centres = coordinatewise_ball(np.zeros((num_labels, num_features)), 1.0 - radii, sphere_rng)
    owner = np.repeat(np.arange(num_labels), points_per_sphere(num_nodes, radii))
    drawn = coordinatewise_ball(centres[owner], radii[owner], rng)
    x = rng.permuted(drawn, axis=1)
    distance = np.linalg.norm(x[:, None, :] - centres[None, :, :], axis=2)
    y = distance <= radii[None, :]
    y[np.arange(num_nodes), owner] = True
    return {"x": x, "y": y, "centres": centres, "owner": owner, "drawn": drawn}


__all__ = [
    "RADII_CHOICES",
    "SYNTHETIC1_RADIUS_SUM",
    "SYNTHETIC1_SPHERE_SIZES",
    "coordinatewise_ball",
    "mldatagen_points",
    "points_per_sphere",
    "resolve_radii",
    "synthetic1_radii",
]
