"""The pair statistics of the GraphNetz paper's Table 2 (``reproduce_gn_pairwise.py``).

Seed-aligned pairs of the four encoders on one dataset: Holm-adjusted paired t and
Wilcoxon p, each pair's minimum detectable effect and the seeds a gap needs (power 0.8),
and the bootstrap over seeds that says how much the median MDE and the count of resolved
pairs move with the draw of seeds. ``values`` maps (dataset, model) to {seed: accuracy}.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

from graphnetz.stats import (
    TooManySeeds,
    holm_adjust,
    min_detectable_difference,
    paired_t_test,
    seeds_needed,
    wilcoxon_test,
)

MODELS = {"gcn": "GCN", "gat": "GAT", "sage": "GraphSAGE", "gt": "GraphTransformer"}
PAIRS = len(list(combinations(MODELS, 2)))
ALPHA = 0.05


def paired(seeds_a: dict[int, float], seeds_b: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    common = sorted(set(seeds_a) & set(seeds_b))
    return np.array([seeds_a[s] for s in common]), np.array([seeds_b[s] for s in common])


def pair_spreads(values, dataset: str) -> list[float]:
    """The standard deviation (ddof 1) of each testable pair's seed differences, pairs in
    :func:`pair_tests`' order."""
    pairs = [p for p in combinations(MODELS, 2) if all((dataset, m) in values for m in p)]
    return [
        float(np.std(np.subtract(*paired(values[(dataset, a)], values[(dataset, b)])), ddof=1))
        for a, b in pairs
    ]


def pair_seeds(spreads, gap: float) -> list[float]:
    """``graphnetz.stats.seeds_needed`` per pair: the seeds the paired t-test needs to
    detect ``gap`` with power 0.8 at the pair's spread (inf beyond its limit)."""
    out = []
    for spread in spreads:
        try:
            out.append(float(seeds_needed(spread, gap, 0.8, ALPHA)))
        except TooManySeeds:
            out.append(float("inf"))
    return out


@cache
def _mde_per_unit(n: int) -> float:
    return min_detectable_difference(1.0, n, 0.8, ALPHA)


def seeds_for_spreads(spreads: np.ndarray, gap: float) -> np.ndarray:
    """:func:`pair_seeds` for an array of spreads at once (the bootstrap's): the smallest
    n ≥ 2 whose MDE at spread 1 is at most gap / spread. The MDE inverts the same power
    function and scales with the spread, so this is ``seeds_needed`` without a search
    per spread."""
    spreads = np.asarray(spreads, dtype=float)
    top = float(spreads.max(initial=0.0))
    if not np.isfinite(top):
        raise ValueError(f"spreads must be finite; the largest is {top}")
    units = [_mde_per_unit(2)]
    while units[-1] * top > gap:
        units.append(_mde_per_unit(len(units) + 2))
    with np.errstate(divide="ignore"):
        room = gap / spreads
    return 2 + np.searchsorted(-np.asarray(units), -room, side="left")


def pair_tests(values, dataset: str):
    """The testable pairs of a dataset with Holm-adjusted t and Wilcoxon p and the MDEs."""
    pairs = [p for p in combinations(MODELS, 2) if all((dataset, m) in values for m in p)]
    samples = [paired(values[(dataset, a)], values[(dataset, b)]) for a, b in pairs]
    t_p = holm_adjust([paired_t_test(a, b).pvalue for a, b in samples]) if pairs else []
    w_p = holm_adjust([wilcoxon_test(a, b).pvalue for a, b in samples]) if pairs else []
    mde = [
        min_detectable_difference(float(np.std(a - b, ddof=1)), a.size, 0.8, ALPHA)
        for a, b in samples
    ]
    return pairs, np.asarray(t_p), np.asarray(w_p), mde


def seed_differences(values, dataset: str) -> np.ndarray | None:
    """The paired differences ``[seeds, pairs]`` over the seeds every model of ``dataset``
    has (so pairs stay paired), pairs in :func:`pair_tests`' order; None below 2 models or
    3 shared seeds."""
    models = [m for m in MODELS if (dataset, m) in values]
    seeds = sorted(set.intersection(*(set(values[(dataset, m)]) for m in models))) if models else []
    if len(models) < 2 or len(seeds) < 3:
        return None
    acc = np.array([[values[(dataset, m)][s] for m in models] for s in seeds])
    pairs = list(combinations(range(len(models)), 2))
    return np.stack([acc[:, a] - acc[:, b] for a, b in pairs], axis=1)


def resampled_seeds(diffs: np.ndarray, draws: int) -> np.ndarray:
    """``draws`` bootstrap resamples of the seed rows (with replacement, a fixed
    generator): ``[draws, seeds, pairs]``."""
    rows = np.random.default_rng(0).integers(0, diffs.shape[0], size=(draws, diffs.shape[0]))
    return diffs[rows]


def median_interval(
    values, dataset: str, per_pair, draws: int = 2000
) -> tuple[float, float, int] | None:
    """95 % percentile bootstrap interval of the median over pairs of ``per_pair(spreads,
    n)``, a quantity of each pair's spread at n seeds: the seeds resampled with
    replacement, ``draws`` times."""
    diffs = seed_differences(values, dataset)
    if diffs is None:
        return None
    spreads = resampled_seeds(diffs, draws).std(axis=1, ddof=1)  # [draws, pairs]
    medians = np.median(per_pair(spreads, diffs.shape[0]), axis=1)
    low, high = np.percentile(medians, [2.5, 97.5])
    return float(low), float(high), diffs.shape[0]


def median_mde_interval(values, dataset: str, draws: int = 2000) -> tuple[float, float, int] | None:
    """:func:`median_interval` of the MDE: proportional to the spread of a pair's
    differences (power 0.8 at n seeds), so each draw rescales one constant by the
    resampled spreads."""
    return median_interval(values, dataset, mde_of_spreads, draws)


def mde_of_spreads(spreads, n: int):
    """The MDE (power 0.8) of pairs with these spreads at n seeds: proportional to the
    spread."""
    return spreads * min_detectable_difference(1.0, n, 0.8, ALPHA)


def resolved_pairs_draws(values, dataset: str, draws: int = 2000) -> np.ndarray | None:
    """The number of pairs resolved (Holm-adjusted paired t ≤ α) in each of ``draws``
    bootstrap resamples of the seeds: how much the count moves with the draw of seeds."""
    diffs = seed_differences(values, dataset)
    if diffs is None:
        return None
    counts = []
    for sample in resampled_seeds(diffs, draws):
        p = [paired_t_test(d, np.zeros_like(d)).pvalue for d in sample.T]
        counts.append(int(np.sum(holm_adjust(p) <= ALPHA)))
    return np.asarray(counts)
