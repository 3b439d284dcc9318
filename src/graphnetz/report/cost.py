"""What the analysed runs cost: wall time and epochs from the records' ``cost:`` rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

COST_COLUMNS = ["task", "model", "n", "wall_s", "epochs", "s_per_epoch", "total_s"]


def cost_frame(data: pd.DataFrame, selected: pd.DataFrame) -> pd.DataFrame:
    """Per analysed (task, model) of ``selected``: runs, mean wall time per run, mean
    epochs run, mean seconds per epoch and total wall time, from the ``cost:wall_time_s``
    and ``cost:epochs_run`` rows of ``data`` (empty when it has none, e.g. a CSV of
    metrics only)."""
    cost = data[data["metric"].isin(["cost:wall_time_s", "cost:epochs_run"])]
    cells = selected[["task", "model", "seed"]]
    cost = cost.merge(cells, on=["task", "model", "seed"])
    if cost.empty:
        return pd.DataFrame(columns=COST_COLUMNS)
    wide = cost.pivot_table(
        index=["task", "model", "seed"], columns="metric", values="value", aggfunc="first"
    )
    wall = wide.get("cost:wall_time_s", pd.Series(np.nan, index=wide.index))
    epochs = wide.get("cost:epochs_run", pd.Series(np.nan, index=wide.index))
    per_epoch = wall / epochs.where(epochs > 0)
    rows = []
    for task, model in dict.fromkeys(zip(cells["task"], cells["model"], strict=True)):
        key = (task, model)
        if key not in wall.index.droplevel("seed"):
            continue
        w, e, pe = (x.xs(key, level=("task", "model")) for x in (wall, epochs, per_epoch))
        rows.append(
            {
                "task": task,
                "model": model,
                "n": int(w.notna().sum()),
                "wall_s": w.mean(),
                "epochs": e.mean(),
                "s_per_epoch": pe.mean(),
                "total_s": w.sum(),
            }
        )
    return pd.DataFrame(rows, columns=COST_COLUMNS)
