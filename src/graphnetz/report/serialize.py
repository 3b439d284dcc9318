"""JSON encoding of the report: NaN becomes null; the :class:`ReportAnalysis` as plain data."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from .analysis import DatasetSection, ReportAnalysis


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
        return float(obj) if math.isfinite(obj) else None
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


def analysis_dict(analysis: ReportAnalysis) -> dict[str, Any]:
    """Summary, pairwise tests, across-task ranks and tests, seed advisor, excluded tasks
    and the Datasets section."""
    cd = analysis.critical_difference
    ranks = cd.ranks
    across: dict[str, Any] = {
        "applicable": ranks.applicable,
        "reason": ranks.reason,
        "conclusion": ranks.conclusion,
        "tasks": ranks.tasks,
        "models": ranks.models,
        "dropped_models": ranks.dropped_models,
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
                "cliques": [list(c) for c in cd.cliques],
                "pvalues": {m: row.to_dict() for m, row in cd.nemenyi_p.iterrows()},
            },
        )
    return {
        "summary": _records(analysis.summary),
        "pairwise": _records(analysis.pairwise),
        "across_tasks": across,
        "seed_advisor": _records(analysis.power),
        "excluded_tasks": list(analysis.excluded_tasks),
        "datasets": datasets_dict(analysis.datasets),
    }
