"""Statistics within each task: per-cell CIs, paired tests between models, seed advisor.

Pure functions of the analysed long table (``task, model, seed, metric, value,
direction``; one row per task × model × seed) that return plain DataFrames.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from graphnetz import stats

SUMMARY_COLUMNS = [
    "task",
    "model",
    "metric",
    "direction",
    "n",
    "mean",
    "std",
    "half_width",
    "low",
    "high",
    "ci",
]
PAIRWISE_COLUMNS = [
    "task",
    "model_a",
    "model_b",
    "n_common",
    "mean_diff",
    "diff_std",
    "t_statistic",
    "t_p",
    "t_p_holm",
    "w_statistic",
    "w_p",
    "w_p_holm",
    "agree",
    "significant",
    "better",
    "method",
    "note",
]
POWER_COLUMNS = [
    "task",
    "model_a",
    "model_b",
    "n_common",
    "diff_std",
    "mdd",
    "delta",
    "seeds_needed",
    "power",
]


def cells(selected: pd.DataFrame) -> Iterable[tuple[str, str, pd.DataFrame]]:
    """(task, model, rows sorted by seed) in the order tasks and models first appear."""
    for task in dict.fromkeys(selected["task"]):
        t = selected[selected["task"] == task]
        for model in dict.fromkeys(t["model"]):
            yield task, model, t[t["model"] == model].sort_values("seed")


def summary_frame(
    selected: pd.DataFrame, alpha: float, ci: str, n_resamples: int, bootstrap_seed: int
) -> pd.DataFrame:
    """Per (task, model): n, mean, std, CI half-width h, low, high (NaN when n = 1).

    ``ci`` is "t" (Student-t interval) or "bootstrap" (percentile bootstrap with
    ``n_resamples`` resamples drawn from ``bootstrap_seed``).
    """
    rows = []
    for task, model, cell in cells(selected):
        x = cell["value"].to_numpy()
        tci = stats.t_interval(x, alpha)
        if ci == "t":
            h, low, high = tci.half_width, tci.low, tci.high
        else:
            b = stats.bootstrap_interval(x, alpha, n_resamples, bootstrap_seed)
            h, low, high = b.half_width, b.low, b.high
        rows.append(
            {
                "task": task,
                "model": model,
                "metric": cell["metric"].iloc[0],
                "direction": cell["direction"].iloc[0],
                "n": tci.n,
                "mean": tci.mean,
                "std": tci.std,
                "half_width": h,
                "low": low,
                "high": high,
                "ci": ci,
            }
        )
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


#: (task, model, seed) -> the run's pairing fingerprint (what a paired comparison
#: assumes is shared: dataset content, split, evaluation negatives).
Pairing = Mapping[tuple[str, str, int], Mapping[str, Any]]


class AlignedPair(NamedTuple):
    """Two models' values on their common, truly paired seeds within one task.

    ``values``: seed-indexed columns ``a`` and ``b``; ``unpaired``: (seed, parts that
    differ) for the common seeds whose two runs have different pairing fingerprints.
    """

    task: str
    a: str
    b: str
    values: pd.DataFrame
    unpaired: list[tuple[int, list[str]]]


def differing_parts(first: Mapping[str, Any] | None, second: Mapping[str, Any] | None):
    """The fingerprint parts two runs of a seed-pair do not share; [] when either run has
    no fingerprint (a CSV, an old record): nothing to check, so nothing is flagged."""
    if not first or not second:
        return []
    return sorted(k for k in set(first) | set(second) if first.get(k) != second.get(k))


def aligned_pairs(selected: pd.DataFrame, pairing: Pairing | None = None) -> Iterator[AlignedPair]:
    """Every model pair of each task, on the seeds both ran, in first-seen order; a seed
    whose two runs differ in their pairing fingerprint is moved to ``unpaired``."""
    pairing = pairing or {}
    for task in dict.fromkeys(selected["task"]):
        t = selected[selected["task"] == task]
        wide = t.pivot(index="seed", columns="model", values="value")
        for a, b in itertools.combinations(dict.fromkeys(t["model"]), 2):
            both = wide[[a, b]].dropna()
            unpaired = []
            for seed in both.index:
                parts = differing_parts(pairing.get((task, a, seed)), pairing.get((task, b, seed)))
                if parts:
                    unpaired.append((int(seed), parts))
            both = both.drop(index=[s for s, _ in unpaired])
            yield AlignedPair(task, a, b, both, unpaired)


def unpaired_frame(selected: pd.DataFrame, pairing: Pairing | None) -> pd.DataFrame:
    """One row per seed-pair whose runs do not share their pairing fingerprint."""
    rows = [
        {"task": p.task, "model_a": p.a, "model_b": p.b, "seed": seed, "differs": ", ".join(parts)}
        for p in aligned_pairs(selected, pairing)
        for seed, parts in p.unpaired
    ]
    return pd.DataFrame(rows, columns=["task", "model_a", "model_b", "seed", "differs"])


def _pair_row(task: str, a: str, b: str, both: pd.DataFrame) -> dict:
    """Paired t and Wilcoxon on the common seeds of models ``a`` and ``b`` (unadjusted p)."""
    row = {
        "task": task,
        "model_a": a,
        "model_b": b,
        "n_common": len(both),
        "mean_diff": np.nan,
        "diff_std": np.nan,
        "t_statistic": np.nan,
        "t_p": np.nan,
        "w_statistic": np.nan,
        "w_p": np.nan,
        "note": "",
    }
    if len(both) < 2:
        row["note"] = (
            "untestable: no common seed" if len(both) == 0 else "untestable: only 1 common seed"
        )
        if len(both) == 1:
            row["mean_diff"] = float(both[a].iloc[0] - both[b].iloc[0])
        return row
    xa, xb = both[a].to_numpy(), both[b].to_numpy()
    tt, ww = stats.paired_t_test(xa, xb), stats.wilcoxon_test(xa, xb)
    d = xa - xb
    notes = [n for n in (tt.note and f"t: {tt.note}", ww.note and f"W: {ww.note}") if n]
    row.update(
        mean_diff=float(d.mean()),
        diff_std=float(d.std(ddof=1)),
        t_statistic=tt.statistic,
        t_p=tt.pvalue,
        w_statistic=ww.statistic,
        w_p=ww.pvalue,
        note="; ".join(notes),
    )
    return row


def _row_of(pair: AlignedPair) -> dict:
    row = _pair_row(pair.task, pair.a, pair.b, pair.values)
    if pair.unpaired:
        seeds = ", ".join(str(s) for s, _ in pair.unpaired)
        note = f"unpaired seed(s) {seeds} (pairing fingerprints differ): left out"
        row["note"] = "; ".join(n for n in (note, row["note"]) if n)
    return row


def pairwise_frame(
    selected: pd.DataFrame, alpha: float, method: str, pairing: Pairing | None = None
) -> pd.DataFrame:
    """Every model pair within each task on seed-aligned differences d = A − B.

    Paired t and Wilcoxon p-values are Holm-adjusted across the pairs of the task;
    ``significant`` follows ``method`` ("t" | "wilcoxon"); ``agree`` says whether both
    tests reach the same decision. Pairs with fewer than 2 common seeds are kept as
    untestable rows (p = NaN, not counted in Holm's m). Seeds whose two runs differ in
    their ``pairing`` fingerprint are not pairs: left out, and named in ``note``.
    """
    out = []
    directions = selected.groupby("task", sort=False)["direction"].first()
    by_task: dict[str, list[dict]] = {}
    for pair in aligned_pairs(selected, pairing):
        by_task.setdefault(pair.task, []).append(_row_of(pair))
    for task, rows in by_task.items():
        frame = pd.DataFrame(rows)
        frame["t_p_holm"] = stats.holm_adjust(frame["t_p"].to_numpy())
        frame["w_p_holm"] = stats.holm_adjust(frame["w_p"].to_numpy())
        frame["direction"] = directions[task]
        out.append(frame)
    if not out:
        return pd.DataFrame(columns=PAIRWISE_COLUMNS)
    df = pd.concat(out, ignore_index=True)
    t_sig, w_sig = df["t_p_holm"] <= alpha, df["w_p_holm"] <= alpha
    testable = df["t_p_holm"].notna() & df["w_p_holm"].notna()
    df["agree"] = pd.array(np.where(testable, t_sig == w_sig, None), dtype="boolean")
    active = df["t_p_holm"] if method == "t" else df["w_p_holm"]
    df["significant"] = active <= alpha  # NaN (untestable) compares False
    a_wins = np.where(df["direction"] == "max", df["mean_diff"] > 0, df["mean_diff"] < 0)
    df["better"] = np.where(df["significant"], np.where(a_wins, df["model_a"], df["model_b"]), "")
    df["method"] = method
    return df[PAIRWISE_COLUMNS]


def power_frame(
    pairwise: pd.DataFrame, alpha: float, delta: float | None = None, power: float = 0.8
) -> pd.DataFrame:
    """Seed-count advisor per pair, from the pilot standard deviation of differences.

    ``mdd``: smallest difference the paired t-test detects with ``power`` at the
    current number of common seeds. ``seeds_needed``: seeds to detect ``delta``
    (default: the observed |Δμ| — optimistic, a planning aid only); ``inf`` where
    that would take more than 100 000 seeds.
    """
    rows = []
    for r in pairwise.itertuples(index=False):
        target = abs(r.mean_diff) if delta is None else abs(float(delta))
        ok = r.n_common >= 2 and np.isfinite(r.diff_std) and r.diff_std > 0
        mdd = (
            stats.min_detectable_difference(r.diff_std, r.n_common, power, alpha) if ok else np.nan
        )
        need = np.nan
        if ok and np.isfinite(target) and target > 0:
            try:
                need = stats.seeds_needed(r.diff_std, target, power, alpha)
            except stats.TooManySeeds:  # a negligible observed gap: not worth chasing
                need = np.inf
        rows.append(
            {
                "task": r.task,
                "model_a": r.model_a,
                "model_b": r.model_b,
                "n_common": r.n_common,
                "diff_std": r.diff_std,
                "mdd": mdd,
                "delta": target,
                "seeds_needed": need,
                "power": power,
            }
        )
    return pd.DataFrame(rows, columns=POWER_COLUMNS)
