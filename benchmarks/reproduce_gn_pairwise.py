"""GraphNetz paper, Table 2: pairwise Holm-adjusted paired-t and Wilcoxon p on Cora and CiteSeer.

The paper's protocol: GCN, GAT, SAGE and GT, 10 seeds, 100 epochs, test accuracy. For each
dataset the 6 pairs are compared on seed-aligned accuracies with ``graphnetz.stats``
(paired t and exact Wilcoxon, each Holm-adjusted over the 6 pairs), next to the published
means, the number of pairs resolved at α = 0.05 (paired t, the report's default), the
median minimum detectable effect (power 0.8) and the median seeds a 0.01 and a 0.005 gap
need (``graphnetz.stats.seeds_needed``). PubMed (not in the offline mirror) and the
published "All" column (PubMed's pairs pooled with the others) are kept as missing cells.
Writes section ``gn_table_2``.

    python train.py -m dataset=cora,citeseer model=gcn,gat,sage,gt seed='range(10)' \\
        trainer.max_epochs=100 num_threads=1 resume=true paths.data_mirror=../shared/data \\
        hydra.sweep.dir=outputs/multirun/repro_table2          # ≈ 4 min on one core
    python benchmarks/reproduce_gn_pairwise.py outputs/multirun/repro_table2
"""

from __future__ import annotations

import argparse

import numpy as np
from reproduce_common import (
    DOC,
    Cell,
    Ours,
    package_command,
    per_seed,
    read_published,
    read_reference_package_runs,
    reference_package_note,
    render_cells,
    replace_section,
    require_records,
    require_some,
    run_cost,
    seed_span,
    summary,
    try_setting,
)
from reproduce_pairwise_stats import (
    ALPHA,
    MODELS,
    PAIRS,
    mde_of_spreads,
    median_interval,
    pair_seeds,
    pair_spreads,
    pair_tests,
    paired,
    resolved_pairs_draws,
    seeds_for_spreads,
)

SECTION = "gn_table_2"
DATASETS = ("cora", "citeseer", "pubmed")
#: Datasets of the published table that the offline mirror lacks: why, in the cells.
NOT_OFFLINE = {
    "pubmed": "PubMed is not in the offline mirror (its ind.pubmed.allx, over 4 MiB, could "
    "not be obtained: the mirror's MANIFEST.md); the command runs where it downloads",
}
NAMES = {"cora": "Cora", "citeseer": "CiteSeer", "pubmed": "PubMed"}
#: The gaps the published table gives the seeds needed for.
GAPS = (0.01, 0.005)
#: The published summary rows (column of published.csv -> quantity shown).
SUMMARY = {
    "resolved_pairs": f"resolved (Holm t ≤ {ALPHA})",
    "median_mde": "median MDE (power 0.8)",
    **{f"seeds_for_{gap}": f"median seeds for a {gap} gap (power 0.8)" for gap in GAPS},
}
#: The reference's encoder dropout (its model files) and ours (task.encoder_dropout).
REFERENCE_DROPOUT = {"gcn": 0.0, "gat": 0.6, "sage": 0.5, "gt": 0.1}
REFERENCE_FILE = {
    "gcn": "_gcn.py",
    "gat": "_gat.py",
    "sage": "_graphsage.py",
    "gt": "_graph_transformer.py",
}
OUR_DROPOUT = 0.5
SWEEP_COMMAND = (
    "python train.py -m dataset=cora,citeseer model=gcn,gat,sage,gt seed='range(10)' "
    "trainer.max_epochs=100 num_threads=1 resume=true paths.data_mirror=../shared/data "
    "hydra.sweep.dir={sweep}"
)
#: The reference's GAT and GraphTransformer give each head the full hidden width (8 x 64
#: and 4 x 64, concatenated) into a 64-wide output; ours split model.hidden_channels over
#: the heads unless model.head_channels is set. Its GAT has ELU between its layers, its
#: GraphTransformer's attention dropout equals its dropout. The overrides that set these
#: (with the reference's dropout):
REFERENCE_WIDTH = {
    "gat": {"model.head_channels": 64, "task.encoder_dropout": 0.6, "model.activation": "elu"},
    "gt": {"model.head_channels": 64, "task.encoder_dropout": 0.1, "model.attn_dropout": 0.1},
}
#: Keys that are not in the model configs: added on the command line with ``+``.
APPENDED_KEYS = (
    "model.input_dropout",
    "model.head_channels",
    "model.activation",
    "dataset.loader.lattice",
    "dataset.loader.spins",
)
#: The reference's GraphSAGE and GraphTransformer drop only between their two layers, not
#: their input features (its GAT drops both; its GCN has no dropout). The overrides that
#: set this, with the reference's other settings of the model:
REFERENCE_INPUT = {
    "sage": {"model.input_dropout": False},
    "gt": {**REFERENCE_WIDTH["gt"], "model.input_dropout": False},
}
WIDTH_COMMAND = (
    "python train.py -m dataset=cora,citeseer model={model} {overrides} seed='range(10)' "
    "trainer.max_epochs=100 num_threads=1 resume=true paths.data_mirror=../shared/data "
    "hydra.sweep.dir={sweep}"
)


def command_overrides(settings: dict) -> str:
    """Command-line overrides for ``settings``; keys not in the model configs
    (:data:`APPENDED_KEYS`) are added (``+``), booleans written as Hydra reads them."""
    return " ".join(
        f"{'+' if k in APPENDED_KEYS else ''}{k}={str(v).lower()}" for k, v in settings.items()
    )


def has_settings(record, overrides: dict[str, float]) -> bool:
    """Whether a record's resolved config carries every override's value (dotted keys)."""

    def value_at(key: str):
        node = record["config"]
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node

    return all(value_at(key) == value for key, value in overrides.items())


def sweep_fill(sweep: str, dataset: str) -> str:
    """The command that fills a dataset's cells (and why it cannot run offline)."""
    command = f"`{SWEEP_COMMAND.format(sweep=sweep)}`"
    if dataset in NOT_OFFLINE:
        command = command.replace("dataset=cora,citeseer", f"dataset={dataset}")
        return f"{command} ({NOT_OFFLINE[dataset]})"
    return command


def best_val_accuracy(records) -> dict[tuple[str, str], dict[int, float]]:
    """Test accuracy at the best validation epoch (first maximum), from the run histories."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for rec in records:
        history = rec.get("history") or []
        if history and "val_accuracy" in history[0]:
            best = max(history, key=lambda e: e["val_accuracy"])
            out.setdefault((rec["dataset"], rec["model"]), {})[int(rec["seed"])] = best[
                "test_accuracy"
            ]
    return out


def variant_accuracies(folder: str | None, settings: dict[str, dict]) -> dict:
    """Per (dataset, model), the seeds' test accuracies of the runs in ``folder`` that
    carry their model's reference ``settings`` (overrides); {} without a folder."""
    records = require_records([folder] if folder else [])
    chosen = [
        r
        for r in records
        if r["dataset"] in DATASETS
        and r["model"] in settings
        and has_settings(r, settings[r["model"]])
    ]
    return per_seed(chosen, "accuracy")


def tried_notes(cell: Cell, m: str, dataset: str, best_val, variant, width, inputs) -> None:
    """Say what the other epoch rule and the reference's dropout (and width) give;
    explained when the reference's setting lands inside."""
    notes = []
    if (dataset, m) in best_val:
        alt = Ours.from_values(best_val[(dataset, m)].values())
        notes.append(f"the best-validation epoch instead of the last gives {alt.text(4)}")
    source = f"kleyt0n/graphnetz src/graphnetz/models/{REFERENCE_FILE[m]}"
    settings = []
    if (dataset, m) in variant:
        settings.append(
            (
                variant[(dataset, m)],
                f"the reference's dropout for {MODELS[m]} is {REFERENCE_DROPOUT[m]} "
                f"({source}), ours {OUR_DROPOUT}; at {REFERENCE_DROPOUT[m]} ours gives",
            )
        )
    if (dataset, m) in width:
        overrides = command_overrides(REFERENCE_WIDTH[m])
        settings.append(
            (
                width[(dataset, m)],
                f"the reference's {MODELS[m]} gives each head the full hidden width "
                f"({source}; ours splits it over the heads); at `{overrides}` ours gives",
            )
        )
    if (dataset, m) in inputs:
        overrides = command_overrides(REFERENCE_INPUT[m])
        settings.append(
            (
                inputs[(dataset, m)],
                f"the reference's {MODELS[m]} drops only between its layers, not its input "
                f"features ({source}); at `{overrides}` ours gives",
            )
        )
    for seeds, text in settings:
        notes.append(try_setting(cell, seeds, text))
    cell.open_note = "tried: " + "; ".join(notes) if notes else ""


def dataset_cells(
    published,
    values,
    best_val,
    variants: tuple[dict, dict, dict],
    dataset: str,
    sweep: str,
    package_runs: dict | None = None,
) -> tuple[list[Cell], list[Cell]]:
    """Means and summary cells, and the pairwise p-value cells, of one dataset."""
    key = ("graphnetz", "2", dataset)
    fill = sweep_fill(sweep, dataset)
    means = []
    for m, label in MODELS.items():
        seeds = values.get((dataset, m))
        cell = Cell(
            (dataset, label, "test accuracy"),
            published.get((*key, label)),
            Ours.from_values(seeds.values()) if seeds else None,
            missing_note=fill,
        )
        tried_notes(cell, m, dataset, best_val, *variants)
        variant, width, inputs = variants
        ours_there = (
            inputs.get((dataset, m)) or width.get((dataset, m)) or variant.get((dataset, m))
        )
        reference_package_note(cell, (package_runs or {}).get((dataset, m)), ours_there)
        means.append(cell)
    pairs, t_p, w_p, mde = pair_tests(values, dataset)
    if not pairs:
        note = f"needs {NAMES[dataset]}'s runs (the means above say which command fills them)"
        return means + missing_summary(published, key, dataset, note), []
    pvalues = []
    for (a, b), tp, wp in zip(pairs, t_p, w_p, strict=True):
        name = f"{MODELS[a]} vs {MODELS[b]}"
        pvalues.append(Cell((dataset, name, "Holm paired-t p"), None, Ours(float(tp))))
        pvalues.append(Cell((dataset, name, "Holm Wilcoxon p"), None, Ours(float(wp))))
    ours_means = [c.ours.mean for c in means if c.ours is not None]
    pub_means = [c.published.value for c in means if c.published is not None]
    note = (
        f"follows the means: our largest gap between two encoders is "
        f"{max(ours_means) - min(ours_means):.4f}, the published one "
        f"{max(pub_means) - min(pub_means):.3f}"
    )
    variant, width, inputs = variants
    reference = {**variant, **width, **inputs}  # the reference's settings where we ran them
    reference_resolved, reference_values, reference_mde = None, None, None
    underpowered = None
    if any(k[0] == dataset for k in reference):
        reference_values = {**values, **reference}
        ref_pairs, ref_t, _, reference_mde = pair_tests(reference_values, dataset)
        underpowered = underpowered_pairs(
            published, key, reference_values, dataset, ref_pairs, ref_t, reference_mde
        )

        def how(key) -> str:
            parts = [
                p
                for p, on in (("and width", key in width), ("no input dropout", key in inputs))
                if on
            ]
            return f" ({', '.join(parts)})" if parts else ""

        changed = sorted(MODELS[k[1]] + how(k) for k in reference if k[0] == dataset)
        reference_resolved = int(np.sum(ref_t <= ALPHA))
        note += (
            f"; with the reference's dropouts ({', '.join(changed)}) "
            f"{reference_resolved} of {len(ref_t)} pairs are resolved"
        )
    resolved = Cell(
        (dataset, f"{len(pairs)} pairs", f"resolved (Holm t ≤ {ALPHA})"),
        published.get((*key, "resolved_pairs")),
        Ours(float(np.sum(t_p <= ALPHA))),
        open_note=note,
    )
    if resolved.published is not None and reference_resolved == resolved.published.value:
        resolved.explanation = note  # the reference's settings resolve as many pairs
    elif (
        resolved.published is not None
        and reference_resolved is not None
        and reference_resolved < resolved.published.value
        and underpowered
    ):
        resolved.explanation = f"{note}; {underpowered}"
    elif resolved.published is not None and reference_values is not None:
        spread, holds = resolved_spread_note(reference_values, dataset, resolved.published.value)
        if holds:
            resolved.explanation = f"{note}; {spread}"
        else:
            resolved.open_note = f"{note}; tried: {spread}"
    means.append(resolved)
    settings = [
        ("", values, mde),
        (" with the reference's settings", reference_values, reference_mde),
    ]
    means.append(mde_cell(published.get((*key, "median_mde")), settings, dataset))
    for gap in GAPS:
        seeds_settings = [
            (label, seeds, pair_seeds(pair_spreads(seeds, dataset), gap) if seeds else None)
            for label, seeds, _ in settings
        ]
        published_seeds = published.get((*key, f"seeds_for_{gap}"))
        means.append(seeds_cell(published_seeds, seeds_settings, dataset, gap))
    return means, pvalues


def missing_summary(published, key, dataset: str, note: str, pairs: int = PAIRS) -> list[Cell]:
    """The summary cells of a dataset (or column) without runs here: missing, with ``note``."""
    return [
        Cell(
            (dataset, f"{pairs} pairs", shown),
            published.get((*key, column)),
            None,
            missing_note=note,
        )
        for column, shown in SUMMARY.items()
    ]


def pooled_cells(published, values) -> list[Cell]:
    """The published "All" column: every dataset's pairs pooled (resolved pairs summed,
    medians over all pairs). Over fewer datasets than published it is another quantity,
    so without runs of every dataset its cells are missing, with the reason."""
    key, count = ("graphnetz", "2", "all"), PAIRS * len(DATASETS)
    absent = [d for d in DATASETS if len(pair_spreads(values, d)) < PAIRS]
    if absent:
        names = [NAMES[d] for d in DATASETS]
        note = (
            f"the published column pools the {count} pairs of {', '.join(names[:-1])} and "
            f"{names[-1]}; over fewer datasets it would be another quantity, so it needs "
            f"{' and '.join(NAMES[d] for d in absent)}'s runs (the means above)"
        )
        return missing_summary(published, key, "all", note, count)
    tests = [pair_tests(values, d) for d in DATASETS]
    spreads = [s for d in DATASETS for s in pair_spreads(values, d)]
    ours = {
        "resolved_pairs": sum(int(np.sum(t_p <= ALPHA)) for _, t_p, _, _ in tests),
        "median_mde": float(np.median([m for *_, mde in tests for m in mde])),
        **{f"seeds_for_{gap}": float(np.median(pair_seeds(spreads, gap))) for gap in GAPS},
    }
    return [
        Cell(("all", f"{count} pairs", shown), published.get((*key, column)), Ours(ours[column]))
        for column, shown in SUMMARY.items()
    ]


def resolved_spread_note(
    values, dataset: str, published: float, draws: int = 2000
) -> tuple[str, bool]:
    """How the resolved count at the reference's settings moves when its seeds are
    resampled, and whether its 95 % bootstrap interval holds the published count: a count
    of p-values under a threshold at 10 seeds is itself a draw."""
    counts = resolved_pairs_draws(values, dataset, draws)
    if counts is None:
        return "too few shared seeds to resample", False
    # the quantiles of a count are counts: the smallest with at least 2.5 % (97.5 %) below
    low, high = (int(v) for v in np.quantile(counts, [0.025, 0.975], method="inverted_cdf"))
    share = float(np.mean(counts == published))
    text = (
        f"the count is itself a draw of the seeds: resampling them ({counts.size} bootstrap "
        f"draws) at the reference's settings gives {low}-{high} resolved pairs (95 %), "
        f"exactly {published:g} in {share:.0%} of draws (a resample repeats seeds, which "
        f"makes differences look steadier, so the interval if anything leans high)"
    )
    return text, low <= published <= high


def underpowered_pairs(published, key, values, dataset: str, pairs, t_p, mde) -> str | None:
    """Why fewer pairs are resolved than published, if the pairs left unresolved at the
    reference's settings all differ by less than their minimum detectable effect (power
    0.8): whether such a pair is resolved at this many seeds is then a matter of chance.
    None if some unresolved pair differs by more (that is not a power question)."""
    said = []
    for (a, b), p, m in zip(pairs, t_p, mde, strict=True):
        if p <= ALPHA:
            continue
        x, y = paired(values[(dataset, a)], values[(dataset, b)])
        diff = abs(float(np.mean(x - y)))
        if diff >= m:
            return None
        pub = [published.get((*key, MODELS[k])) for k in (a, b)]
        gap = f", {abs(pub[0].value - pub[1].value):.3f} published" if all(pub) else ""
        said.append(
            f"{MODELS[a]} vs {MODELS[b]} ({diff:.4f} here{gap}; detectable with power 0.8 "
            f"at {x.size} seeds: {m:.4f}; Holm t p = {p:.3f})"
        )
    if not said:
        return None
    return (
        "the pairs the reference's settings leave unresolved differ by less than the "
        "smallest difference this many seeds detect, so resolving them is chance: "
        + ", ".join(said)
    )


def mde_cell(published, settings, dataset: str) -> Cell:
    """The median MDE (:func:`spread_cell`): proportional to the seeds' spread.
    ``settings``: ``(label, per-seed values, the pairs' MDEs)`` at our settings first, then
    at the reference's (values None where they were not run)."""
    cause = "an MDE is proportional to the spread of the paired differences"
    what = ("median MDE", lambda v: f"{v:.4f}")
    shown = SUMMARY["median_mde"]
    return spread_cell(shown, published, settings, dataset, mde_of_spreads, cause, what)


def seeds_cell(published, settings, dataset: str, gap: float) -> Cell:
    """The median seeds a ``gap`` needs (:func:`spread_cell`); ``settings`` as for
    :func:`mde_cell`, with the pairs' seeds needed."""

    def per_pair(spreads, _n):
        return seeds_for_spreads(spreads, gap)

    cause = f"the seeds a {gap} gap needs grow with the spread of the paired differences"
    what = ("median seeds needed", lambda v: f"{v:g}")
    shown = SUMMARY[f"seeds_for_{gap}"]
    return spread_cell(shown, published, settings, dataset, per_pair, cause, what)


def spread_cell(shown, published, settings, dataset: str, per_pair, cause: str, what) -> Cell:
    """A median over the pairs of a quantity of their spread, explained when a bootstrap
    interval over seeds holds the published value: the quantity follows the spread, which
    10 seeds estimate only roughly. ``per_pair(spreads, n)``: the quantity at n seeds;
    ``what``: its name and number format; ``cause``: why it moves with the spread."""
    first = settings[0][2]
    cell = Cell((dataset, f"{len(first)} pairs", shown), published, Ours(float(np.median(first))))
    if published is None:
        return cell
    name, show = what
    unit = published.unit or 0.0
    notes = []
    for label, seeds, pair_values in settings:
        interval = median_interval(seeds, dataset, per_pair) if seeds else None
        if interval is None:
            continue
        low, high, n = interval
        median = float(np.median(pair_values))
        holds = low - unit / 2 <= published.value <= high + unit / 2
        notes.append(
            f"{label} the {name} is {show(median)}, and resampling the {n} seeds (2000 "
            f"bootstrap draws) puts it in [{show(low)}, {show(high)}] (95 %)"
            + (", which holds the published value" if holds else "")
        )
        if holds:
            cell.explanation = f"{cause}, which a few seeds estimate roughly:" + ";".join(notes)
            return cell
    cell.open_note = "tried:" + ";".join(notes) if notes else ""
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sweeps", nargs="+", help="sweep folder(s) of the Cora/CiteSeer runs")
    parser.add_argument(
        "--reference-dropout",
        help="sweep folder of the same runs at the reference's encoder dropout "
        "(task.encoder_dropout = REFERENCE_DROPOUT[model])",
    )
    parser.add_argument(
        "--reference-width",
        help="sweep folder of GAT and GraphTransformer at the reference's head width "
        "and dropouts (REFERENCE_WIDTH)",
    )
    parser.add_argument(
        "--reference-input",
        help="sweep folder of GraphSAGE and GraphTransformer without input dropout, at the "
        "reference's other settings (REFERENCE_INPUT)",
    )
    parser.add_argument(
        "--reference-package",
        help="JSON of benchmarks/reference_package_runs.py: the reference package run here "
        "on the mirror's Cora and CiteSeer (shipped: benchmarks/reproduce/reference_package_runs.json)",
    )
    parser.add_argument("--doc", default=str(DOC))
    args = parser.parse_args()
    published = read_published()
    package_runs = read_reference_package_runs(args.reference_package)
    records = [r for r in require_records(args.sweeps) if r["dataset"] in DATASETS]
    require_some(records, "/".join(DATASETS), args.sweeps)
    values = per_seed(records, "accuracy")
    best_val = best_val_accuracy(records)
    dropouts = {m: {"task.encoder_dropout": p} for m, p in REFERENCE_DROPOUT.items()}
    variant = variant_accuracies(args.reference_dropout, dropouts)
    width = variant_accuracies(args.reference_width, REFERENCE_WIDTH)
    inputs = variant_accuracies(args.reference_input, REFERENCE_INPUT)
    n_runs, hours = run_cost(records)
    means, pvalues = [], []
    for dataset in DATASETS:
        variants = (variant, width, inputs)
        m, p = dataset_cells(
            published, values, best_val, variants, dataset, args.sweeps[0], package_runs
        )
        means += m
        pvalues += p
    means += pooled_cells(published, values)
    body = "\n".join(
        [
            "Regenerate (sweep resumable; the script only reads its records):",
            "",
            "```",
            SWEEP_COMMAND.format(sweep=args.sweeps[0]),
            *(
                [
                    SWEEP_COMMAND.format(sweep=args.reference_dropout).replace(
                        "model=gcn,gat,sage,gt", f"model={m} task.encoder_dropout={p}"
                    )
                    for m, p in REFERENCE_DROPOUT.items()
                    if p != OUR_DROPOUT
                ]
                if args.reference_dropout
                else []
            ),
            *(
                [
                    WIDTH_COMMAND.format(
                        model=m,
                        overrides=command_overrides(settings),
                        sweep=args.reference_width,
                    )
                    for m, settings in REFERENCE_WIDTH.items()
                ]
                if args.reference_width
                else []
            ),
            *(
                [
                    WIDTH_COMMAND.format(
                        model=m,
                        overrides=command_overrides(settings),
                        sweep=args.reference_input,
                    )
                    for m, settings in REFERENCE_INPUT.items()
                ]
                if args.reference_input
                else []
            ),
            f"python benchmarks/reproduce_gn_pairwise.py {' '.join(args.sweeps)}"
            + (f" --reference-dropout {args.reference_dropout}" if args.reference_dropout else "")
            + (f" --reference-width {args.reference_width}" if args.reference_width else "")
            + (f" --reference-input {args.reference_input}" if args.reference_input else "")
            + (f" --reference-package {args.reference_package}" if args.reference_package else ""),
            *([package_command(args.reference_package)] if args.reference_package else []),
            "```",
            "",
            f"Read {n_runs} finished runs ({seed_span(records)}; "
            f"{hours * 60:.1f} min of summed run time, one thread). Means, resolved pairs, "
            "the median minimum detectable effect and the median seeds a gap needs (per "
            "pair `graphnetz.stats.seeds_needed`, power 0.8; the published page does not "
            "say how it summarises its pairs there, the median is ours, as for the MDE) "
            "against the published values:",
            "",
            render_cells(means, ("dataset", "model / pairs", "quantity")),
            summary(means),
            "Pairwise p-values (Holm-adjusted over the 6 pairs of a dataset; exact for these "
            "records). The published per-pair p-values are not available offline, only the "
            "resolved counts above:",
            "",
            render_cells(pvalues, ("dataset", "pair", "test")),
        ]
    )
    replace_section(args.doc, SECTION, body)
    print(f"read {n_runs} records from {args.sweeps}; wrote section {SECTION} of {args.doc}")


if __name__ == "__main__":
    main()
