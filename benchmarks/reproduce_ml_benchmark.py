"""Multi-label study (Zhao et al. 2023), Tables 3 / 9: 8 methods × 5 datasets, four metrics.

Reads the run records of an ``experiment=ml_real`` sweep (resumable, cheapest datasets
first) and tables, per metric, the test mean ± 95 % t half-width over the seeds present:
macro AP, macro AUROC and the study's F1 (top-k with k = the node's true label count:
``micro_f1_topk`` / ``macro_f1_topk``), plus our thresholded F1 (0.5) for reference.
Missing (dataset, method) cells are listed with the command that fills them; the measured
cost per dataset comes from the records. Writes section ``ml_tables_3_9``.

    nice -n 15 python train.py -m experiment=ml_real dataset=humloc,eukloc seed='range(3)' \\
        num_threads=1 resume=true paths.data_mirror=../shared/data \\
        hydra.sweep.dir=outputs/multirun/repro_ml_real
    python benchmarks/reproduce_ml_benchmark.py outputs/multirun/repro_ml_real
"""

from __future__ import annotations

import argparse
from collections import Counter

from reproduce_common import (
    DOC,
    NOT_AVAILABLE,
    cost_by_cell,
    method_table,
    per_seed,
    render_matrix,
    replace_section,
    require_records,
    require_some,
)

SECTION = "ml_tables_3_9"
DATASETS = {
    "humloc": "HumLoc",
    "eukloc": "EukLoc",
    "pcg": "PCG",
    "dblp": "DBLP",
    "blogcatalog": "BlogCatalog",
}
METHODS = {
    "mlp": "MLP",
    "deepwalk": "DeepWalk",
    "gcn": "GCN",
    "gat": "GAT",
    "sage_sampled": "GraphSAGE [25,10]",
    "h2gcn": "H2GCN",
    "gcn_lpa": "GCN-LPA",
    "lanc": "LANC",
}
METRICS = {
    "macro_ap": "macro AP (the study's main metric)",
    "macro_auroc": "macro AUROC",
    "micro_f1_topk": "micro-F1, top-k with the true label count (the study's F1)",
    "macro_f1_topk": "macro-F1, top-k with the true label count (the study's F1)",
    "micro_f1": "micro-F1 thresholded at 0.5 (ours, not comparable with the study)",
    "macro_f1": "macro-F1 thresholded at 0.5 (ours, not comparable with the study)",
}
SEEDS = 3
FILL = (
    "nice -n 15 python train.py -m experiment=ml_real dataset={dataset} model={models} "
    "seed='range({seeds})' num_threads=1 resume=true paths.data_mirror=../shared/data "
    "hydra.sweep.dir={sweep}"
)


def missing_cells(values, sweep: str) -> list[str]:
    """One fill command per dataset with incomplete methods (fewer than SEEDS seeds)."""
    lines = []
    for dataset, label in DATASETS.items():
        absent = [m for m in METHODS if len(values.get((dataset, m), {})) < SEEDS]
        if absent:
            command = FILL.format(
                dataset=dataset, models=",".join(absent), seeds=SEEDS, sweep=sweep
            )
            lines.append(f"* {label}: {', '.join(METHODS[m] for m in absent)}: `{command}`")
    return lines


def cost_lines(records) -> list[str]:
    cost = cost_by_cell(records)
    lines = [
        "| dataset | runs | summed run time | slowest method (mean s per run) |",
        "|---|---:|---:|---|",
    ]
    for dataset, label in DATASETS.items():
        cells = {m: cost[(dataset, m)] for m in METHODS if (dataset, m) in cost}
        if not cells:
            continue
        runs = sum(len(v) for v in cells.values())
        total = sum(sum(v) for v in cells.values())
        slow = max(cells, key=lambda m: sum(cells[m]) / len(cells[m]))
        mean_slow = sum(cells[slow]) / len(cells[slow])
        lines.append(
            f"| {label} | {runs} | {total / 60:.1f} min | {METHODS[slow]} ({mean_slow:.0f} s) |"
        )
    return lines


def cell_cost_lines(records) -> list[str]:
    """Per (method, dataset): mean seconds per run and per epoch (evaluation included)."""
    runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
    for rec in records:
        wall, epochs = float(rec.get("wall_time_s") or 0.0), int(rec.get("epochs_run") or 0)
        runs.setdefault((rec["dataset"], rec["model"]), []).append((wall, epochs))

    def cell(dataset: str, model: str) -> str:
        runs_here = runs.get((dataset, model))
        if not runs_here:
            return "—"
        wall = sum(w for w, _ in runs_here)
        epochs = sum(e for _, e in runs_here)
        per_epoch = f", {wall / epochs:.2f} s/epoch" if epochs else ""
        return f"{wall / len(runs_here) / 60:.1f} min{per_epoch}"

    return method_table(METHODS, DATASETS, cell, align="---:")


def feature_notes(records) -> list[str]:
    notes = {}
    for rec in records:
        notes.setdefault(rec["dataset"], rec.get("data", {}).get("features", "?"))
    lines = [f"* {DATASETS[d]}: {notes[d]}" for d in DATASETS if d in notes and d != "dblp"]
    used = notes.get("dblp", "the loader's structural fallback")
    lines.append(
        f"* DBLP: {used}; the original features are not obtainable offline, so this column "
        "is not comparable with the study's DBLP column"
    )
    return lines


def revisions(records) -> str:
    """``abc1234 (n), ...``: the graphnetz revisions the records were trained at."""

    def short(revision: str) -> str:  # "+dirty": uncommitted changes in the tree then
        return revision[:7] + ("+dirty" if revision.endswith("+dirty") else "")

    counts = Counter(
        short(str(rec.get("versions", {}).get("graphnetz_revision", "unknown"))) for rec in records
    )
    return ", ".join(f"{rev} ({n})" for rev, n in sorted(counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="+", help="ml_real sweep folder(s)")
    parser.add_argument("--doc", default=str(DOC))
    args = parser.parse_args()
    records = [r for r in require_records(args.sweeps) if r["dataset"] in DATASETS]
    require_some(records, "/".join(DATASETS), args.sweeps)
    primary = per_seed(records, "macro_ap")
    body = [
        f"Regenerate: `python benchmarks/reproduce_ml_benchmark.py {' '.join(args.sweeps)}` "
        f"(reads {len(records)} finished runs; their records are archived in "
        "`results/repro_ml_real`, `python -m graphnetz records restore --all` puts them "
        f"back); trained at revisions {revisions(records)} (runs per revision; no record of "
        "an earlier sweep is reused). Every cell: "
        f"**{NOT_AVAILABLE}** (the study's per-cell numbers are in its PDF, which is not in "
        "the offline sources), so each table shows ours only; no verdict can be given.",
        "",
        "Features per dataset (from the run records):",
        "",
        *feature_notes(records),
        "",
    ]
    for metric, title in METRICS.items():
        body += [f"**{title}** (`{metric}`), test, mean ± 95 % t half-width (n seeds):", ""]
        body += [render_matrix(per_seed(records, metric), METHODS, DATASETS)]
    body += ["Measured cost (one thread per run, `nice -n 15`, from the records):", ""]
    body += [*cost_lines(records), ""]
    body += [
        "Per cell, mean minutes per run and seconds per epoch (one training step and the "
        "evaluation of every split; summed run time over summed epochs). Wall times depend "
        "on the speed and load of the machine in the session that ran them (the revisions "
        "above tell the sessions apart), so compare cells of one session:",
        "",
        *cell_cost_lines(records),
        "",
    ]
    missing = missing_cells(primary, args.sweeps[0])
    body += ["Missing cells and the commands that fill them (resumable):", ""]
    body += missing or ["* none"]
    replace_section(args.doc, SECTION, "\n".join(body))
    print(f"read {len(records)} records from {args.sweeps}; wrote section {SECTION} of {args.doc}")
    print("\n".join(missing))


if __name__ == "__main__":
    main()
