"""Hand-written run records and their CSV equivalent, imported by the report tests
(a helper module, not a test module: pytest collects nothing here)."""

import json
from pathlib import Path

# Two tasks x three models x five seeds. Values written by hand; zinc is lower-is-better.
VALUES = {
    ("cora/node_cls", "accuracy", "max"): {
        "gcn": [0.815, 0.810, 0.812, 0.808, 0.811],
        "gat": [0.805, 0.800, 0.809, 0.798, 0.803],
        "sage": [0.790, 0.792, 0.785, 0.789, 0.791],
    },
    ("zinc/graph_reg", "mae", "min"): {
        "gcn": [0.450, 0.440, 0.455, 0.448, 0.452],
        "gat": [0.410, 0.400, 0.405, 0.395, 0.415],
        "sage": [0.500, 0.495, 0.505, 0.490, 0.498],
    },
}


def make_records():
    records = []
    for (task, metric, direction), models in VALUES.items():
        for model, values in models.items():
            for seed, v in enumerate(values):
                records.append(
                    {
                        "schema_version": 1,
                        "status": "ok",
                        "reason": None,
                        "error": None,
                        "task": task,
                        "dataset": task.split("/")[0],
                        "category": "test",
                        "task_type": task.split("/")[1],
                        "model": model,
                        "seed": seed,
                        "primary_metric": metric,
                        "direction": direction,
                        "metrics": {
                            "train": {metric: v, "loss": 0.1},
                            "val": {metric: v + 0.01},
                            "test": {metric: v},
                        },
                        "selection": "final",
                        "selected_epoch": 9,
                        "history": [],
                        "wall_time_s": 1.0,
                        "config": {},
                        "versions": {"torch": "2.13.0"},
                    }
                )
    return records


def schema2_record(task: str, model: str, seed: int, config: dict, accuracy: float, **extra):
    """A hand-written schema-2 record of one run scored by test accuracy (its identity:
    that of ``config``); ``extra`` overrides or adds fields."""
    return {
        "status": "ok",
        "task": task,
        "model": model,
        "seed": seed,
        "primary_metric": "accuracy",
        "direction": "max",
        "metrics": {"test": {"accuracy": accuracy}},
        "config": config,
        "schema_version": 2,
        **extra,
    }


def make_csv(path: Path, with_direction: bool = False) -> Path:
    lines = ["task,model,seed,metric,value" + (",direction" if with_direction else "")]
    for (task, metric, direction), models in VALUES.items():
        for model, values in models.items():
            for seed, v in enumerate(values):
                extra = f",{direction}" if with_direction else ""
                lines.append(f"{task},{model},{seed},{metric},{v}{extra}")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_run_dirs(root: Path, records=None) -> Path:
    for i, rec in enumerate(records if records is not None else make_records()):
        run = root / f"run_{i:03d}"
        run.mkdir(parents=True, exist_ok=True)
        (run / "result.json").write_text(json.dumps(rec))
    return root
