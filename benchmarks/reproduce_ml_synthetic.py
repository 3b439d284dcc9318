"""Multi-label study (Zhao et al. 2023), Tables 4 / 10 / 11: synthetic feature-quality and
homophily sweeps (8 methods, 5 graphs each, 3 seeds).

Reads whatever records the two sweeps have, tables them (macro AP and the study's top-k
F1), and from the measured runs estimates what the full sweeps cost; missing cells get the
command that fills them. Writes section ``ml_tables_4_10_11``.

    python benchmarks/reproduce_ml_synthetic.py \\
        --features outputs/multirun/repro_ml_synthetic_features \\
        --homophily outputs/multirun/repro_ml_synthetic_homophily
"""

from __future__ import annotations

import argparse

import numpy as np
from omegaconf import OmegaConf
from reproduce_common import (
    DOC,
    NOT_AVAILABLE,
    REPO_ROOT,
    cost_by_cell,
    method_table,
    per_seed,
    render_matrix,
    replace_section,
    require_records,
)
from reproduce_ml_benchmark import METHODS

SECTION = "ml_tables_4_10_11"
SEEDS = 3
METRICS = {
    "macro_ap": "macro AP",
    "micro_f1_topk": "micro-F1 (top-k, true label count)",
    "macro_f1_topk": "macro-F1 (top-k, true label count)",
}
COMMAND = (
    "nice -n 15 python train.py -m experiment={experiment} seed='range(3)' "
    "hydra.launcher.n_jobs=2 num_threads=1 resume=true hydra.sweep.dir={sweep}"
)


def levels(experiment: str, key: str) -> list[str]:
    """The swept values of ``key`` in ``conf/experiment/<experiment>.yaml``, in order."""
    cfg = OmegaConf.load(REPO_ROOT / "conf" / "experiment" / f"{experiment}.yaml")
    return [v.strip() for v in str(cfg.hydra.sweeper.params[key]).split(",")]


QUALITY = {
    f"synthetic1_r{r}": f"r = {r}"
    for r in levels("ml_synthetic_features", "dataset.loader.feature_quality")
}
HOMOPHILY = {
    f"synthetic1_a{a}_b0.01": f"α = {a}"
    for a in levels("ml_synthetic_homophily", "dataset.loader.alpha")
}


def graph_statistic(records: list[dict], stat: str) -> dict[str, list[float]]:
    """Per task, one value of a graph statistic per seed, from the run records' dataset
    facts (the graph of a seed is the same for every method)."""
    out: dict[str, dict[int, float]] = {}
    for rec in records:
        value = ((rec.get("dataset_facts") or {}).get("statistics") or {}).get(stat)
        if value is not None:
            out.setdefault(rec["dataset"], {}).setdefault(int(rec["seed"]), float(value))
    return {task: list(seeds.values()) for task, seeds in out.items()}


def graphs_text(features: list[dict], homophily: list[dict]) -> str:
    """What the records say about the graphs: the feature-quality graphs' homophily, edges
    and labels per node, and the homophily each α gives."""
    pooled = {
        stat: [v for values in graph_statistic(features, stat).values() for v in values]
        for stat in ("label_homophily", "edges", "labels_mean")
    }
    parts = []
    if all(pooled.values()):
        h, e, labels = (float(np.mean(v)) for v in pooled.values())
        parts.append(
            f"the feature-quality graphs have label homophily {h:.3f}, {e / 1e6:.2f} M edges and "
            f"{labels:.2f} labels per node (means over the {len(pooled['edges'])} graphs of "
            "the records; Synthetic1's published values: Tables 1–2 above)"
        )
    levels = graph_statistic(homophily, "label_homophily")
    measured = [f"{name}: {np.mean(levels[t]):.3f}" for t, name in HOMOPHILY.items() if t in levels]
    if measured:
        parts.append(
            "the homophily sweep's graphs have label homophily (mean over seeds) "
            + ", ".join(measured)
        )
    return "".join(f"; {part}" for part in parts)


def estimate(experiment: str, records: list[dict], columns: dict[str, str]) -> list[str]:
    """Measured seconds per run (per method and graph) and what the rest would cost."""
    cost = cost_by_cell(records)
    if not cost:
        return [f"* `{experiment}`: no run measured yet."]

    def cell(task: str, model: str) -> str:
        seconds = cost.get((task, model))
        return f"{np.mean(seconds):.0f} ({len(seconds)})" if seconds else "—"

    lines = [
        f"`{experiment}`, measured seconds per run (mean, n):",
        "",
        *method_table(METHODS, columns, cell, align="---:"),
    ]
    spent = sum(sum(v) for v in cost.values())
    missing, guessed = 0, 0.0
    for model in METHODS:
        measured = [s for (task, m), v in cost.items() if m == model for s in v]
        for task in columns:
            left = SEEDS - len(cost.get((task, model), []))
            if left > 0:
                missing += left
                guessed += left * float(np.mean(measured)) if measured else float("nan")
    lines += [
        "",
        f"* measured so far: {sum(len(v) for v in cost.values())} runs, "
        f"{spent / 3600:.1f} core-hours.",
    ]
    if missing:
        rest = (
            f"≈ {guessed / 3600:.1f} core-hours at each method's mean over the graphs "
            "measured (the graphs differ in density, so this is a rough figure)"
            if np.isfinite(guessed)
            else "not estimable until every method has one measured run"
        )
        lines.append(f"* {missing} runs left for {SEEDS} seeds: {rest}.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", default="outputs/multirun/repro_ml_synthetic_features")
    parser.add_argument("--homophily", default="outputs/multirun/repro_ml_synthetic_homophily")
    parser.add_argument("--doc", default=str(DOC))
    args = parser.parse_args()
    features = require_records([args.features])
    homophily = require_records([args.homophily])
    body = [
        "Regenerate: `python benchmarks/reproduce_ml_synthetic.py --features "
        f"{args.features} --homophily {args.homophily}` (reads {len(features)} + "
        f"{len(homophily)} finished runs). Every cell: **{NOT_AVAILABLE}**, so the rows "
        "compare with the study's in their trend only. The graphs are the study's "
        "Synthetic1 family from our generator (`ml_synthetic` with its default point "
        "stage: Mldatagen points with the study's 20 radii, 10 relevant + 10 irrelevant "
        "features). Feature quality r keeps round(10 r) relevant coordinates at "
        "Synthetic1's α = 8.8, b = 0.12; the homophily levels come from α at b = 0.01 "
        "(calibration in `conf/experiment/ml_synthetic_homophily.yaml`)"
        + graphs_text(features, homophily)
        + ".",
        "",
        "Cost (one thread per run, from the records):",
        "",
        *estimate("ml_synthetic_features", features, QUALITY),
        "",
        *estimate("ml_synthetic_homophily", homophily, HOMOPHILY),
        "",
        "Commands that fill every cell (resumable; seeds 0–2):",
        "",
        "```",
        COMMAND.format(experiment="ml_synthetic_features", sweep=args.features),
        COMMAND.format(experiment="ml_synthetic_homophily", sweep=args.homophily),
        "```",
        "",
    ]
    for title, records, columns in (
        ("Tables 4 / 10, feature quality r", features, QUALITY),
        ("Table 11, homophily levels (α at b = 0.01)", homophily, HOMOPHILY),
    ):
        for metric, name in METRICS.items():
            body += [f"**{title}: {name}** (`{metric}`), test:", ""]
            body += [render_matrix(per_seed(records, metric), METHODS, columns)]
    replace_section(args.doc, SECTION, "\n".join(body))
    print(f"read {len(features)} + {len(homophily)} records; wrote section {SECTION} of {args.doc}")


if __name__ == "__main__":
    main()
