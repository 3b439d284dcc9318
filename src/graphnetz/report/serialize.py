"""JSON encoding of the report: NaN becomes null; the :class:`ReportAnalysis` as plain data."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from .analysis import DatasetSection, RankRobustness, ReportAnalysis


def _clean(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _clean(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        if math.isinf(obj):  # a statistic can be infinite (F when every task ranks alike)
            return "inf" if obj > 0 else "-inf"
        return float(obj) if math.isfinite(obj) else None  # NaN: undefined
    if obj is pd.NA:
        return None
    return obj


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(_clean(doc), indent=2, allow_nan=False) + "\n"


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return df.astype(object).where(df.notna(), None).to_dict("records")


def datasets_dict(section: DatasetSection) -> dict[str, Any]:
    return {
        "rows": list(section.rows),
        "chance": list(section.chance),
        "notes": list(section.notes),
    }


def robustness_dict(rob: RankRobustness) -> dict[str, Any]:
    """Rank probabilities (model -> rank -> P), verdict survival per pair, leave-one-out."""
    doc: dict[str, Any] = {"applicable": rob.applicable, "reason": rob.reason}
    if rob.applicable:
        doc.update(
            n_resamples=rob.n_resamples,
            seed=rob.seed,
            order_stability=rob.order_stability,
            rank_probabilities={
                m: {str(r): p for r, p in row.items()}
                for m, row in rob.rank_probabilities.iterrows()
            },
            pairs=_records(rob.pairs),
            leave_one_out={t: row.to_dict() for t, row in rob.loo.iterrows()},
        )
    return doc


def analysis_dict(analysis: ReportAnalysis) -> dict[str, Any]:
    """Summary, pairwise tests, equivalence and Bayesian comparison, across-task ranks and
    tests with their robustness, seed advisor, unpaired seed-pairs, excluded tasks and the
    Datasets section."""
    cd = analysis.critical_difference
    ranks = cd.ranks
    across: dict[str, Any] = {
        "applicable": ranks.applicable,
        "reason": ranks.reason,
        "conclusion": ranks.conclusion,
        "tasks": ranks.tasks,
        "models": ranks.models,
        "dropped_models": ranks.dropped_models,
        "missing": ranks.missing,
        "dropped_tasks": ranks.dropped_tasks,
        "missing_cells": [{"task": t, "model": m} for t, m in ranks.missing_cells],
    }
    if ranks.applicable:
        f = ranks.friedman
        across.update(
            mean_ranks=ranks.mean_ranks.to_dict(),
            rank_table={t: row.to_dict() for t, row in ranks.rank_table.iterrows()},
            friedman={
                "chi2": f.statistic,
                "pvalue": f.pvalue,
                "dof": f.dof,
                "rejects": ranks.rejects,
            },
            iman_davenport={
                "F": f.iman_davenport,
                "pvalue": f.iman_davenport_pvalue,
                "dof": list(f.iman_davenport_dof),
            },
            nemenyi={
                "cd": cd.cd,
                "q_alpha": cd.q_alpha,
                "cliques": [list(c) for c in cd.nemenyi_cliques],
                "pvalues": {m: row.to_dict() for m, row in cd.nemenyi_p.iterrows()},
            },
            cliques={
                "method": cd.clique_method,
                "groups": [list(c) for c in cd.cliques],
                "wilcoxon_holm_pvalues": {m: row.to_dict() for m, row in cd.wilcoxon_p.iterrows()},
            },
        )
    return {
        "summary": _records(analysis.summary),
        "pairwise": _records(analysis.pairwise),
        "equivalence": {
            "margin": analysis.settings.equivalence_margin,
            "within_task": _records(analysis.equivalence),
            "bayesian_across_tasks": _records(analysis.bayes_across),
        },
        "across_tasks": across,
        "robustness": robustness_dict(analysis.robustness),
        "seed_advisor": _records(analysis.power),
        "unpaired": _records(analysis.unpaired),
        "excluded_tasks": list(analysis.excluded_tasks),
        "datasets": datasets_dict(analysis.datasets),
    }
