"""The whole analysis of a report: raw results and settings in, :class:`ReportAnalysis` out.

Pure; ``BenchmarkReport.analysis`` caches its result per settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from .across_tasks import critical_difference, rank_analysis, rank_robustness
from .analysis import ReportAnalysis, ReportSettings
from .cost import cost_frame
from .datasets import dataset_section
from .equivalence import bayes_across_frame, equivalence_frame
from .records import COLUMNS
from .within_task import Pairing, pairwise_frame, power_frame, summary_frame, unpaired_frame


def long_table(data: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The ``COLUMNS`` of ``data`` (integer seeds, float values) without duplicate
    (task, model, seed, metric) rows, and those duplicates (the first one is kept)."""
    missing = [c for c in COLUMNS if c not in data.columns]
    if missing:
        raise ValueError(f"data lacks column(s) {missing}; required {COLUMNS}")
    data = data[COLUMNS].copy()
    data["seed"] = data["seed"].astype(int)
    data["value"] = data["value"].astype(float)
    dup = data.duplicated(["task", "model", "seed", "metric"], keep="first")
    duplicates = data[dup].drop(columns=["value", "direction"]).to_dict("records")
    return data[~dup].reset_index(drop=True), duplicates


def select(data: pd.DataFrame, primary_metrics: Mapping[str, str], metric: str | None):
    """The analysed values: the rows of ``metric``, or of each task's primary metric."""
    if metric is None:
        mask = data["metric"] == data["task"].map(primary_metrics)
    else:
        mask = data["metric"] == metric
    return data[mask].reset_index(drop=True)


def first_seen(values: Iterable[Any]) -> list[Any]:
    """Distinct values in the order they first appear."""
    return list(dict.fromkeys(values))


def analyse(
    data: pd.DataFrame,
    primary_metrics: Mapping[str, str],
    settings: ReportSettings,
    *,
    datasets: Iterable[Mapping[str, Any]] = (),
    runs: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    n_duplicates: int = 0,
    provenance: Mapping[str, Any] | None = None,
    pairing: Pairing | None = None,
) -> ReportAnalysis:
    """Every statistic of the report for ``settings``.

    ``data``: the long table (``task, model, seed, metric, value, direction``); ``runs``:
    the ``skipped``, ``failed`` and ``unreadable`` runs, named in the report; ``pairing``:
    each run's pairing fingerprint by (task, model, seed), where the runs recorded one.
    """
    runs = runs or {}
    st = settings
    sel = select(data, primary_metrics, st.metric)
    pairwise = pairwise_frame(sel, st.alpha, st.pairwise_method, pairing)
    ranks = rank_analysis(sel, st.alpha, st.missing)
    margin = st.equivalence_margin
    draws = {"n_samples": st.n_posterior_samples, "seed": st.bootstrap_seed}
    equivalence, across = pd.DataFrame(), pd.DataFrame()
    if margin is not None:
        equivalence = equivalence_frame(sel, pairwise, margin, st.alpha, pairing=pairing, **draws)
        across = bayes_across_frame(sel, margin, **draws)
    kept = set(sel["task"])
    return ReportAnalysis(
        settings=settings,
        tasks=tuple(first_seen(sel["task"])),
        models=tuple(first_seen(sel["model"])),
        directions=sel.groupby("task", sort=False)["direction"].first().to_dict(),
        n_values=len(sel),
        excluded_tasks=tuple(t for t in first_seen(data["task"]) if t not in kept),
        summary=summary_frame(
            sel, settings.alpha, settings.ci, settings.n_resamples, settings.bootstrap_seed
        ),
        pairwise=pairwise,
        critical_difference=critical_difference(ranks, sel, st.cliques),
        power=power_frame(pairwise, settings.alpha),
        cost=cost_frame(data, sel),
        datasets=dataset_section(datasets),
        skipped=tuple(runs.get("skipped", ())),
        failed=tuple(runs.get("failed", ())),
        unreadable=tuple(runs.get("unreadable", ())),
        n_duplicates=n_duplicates,
        provenance=dict(provenance or {}),
        equivalence=equivalence,
        bayes_across=across,
        robustness=rank_robustness(ranks, st.n_task_resamples, st.bootstrap_seed),
        unpaired=unpaired_frame(sel, pairing),
    )
