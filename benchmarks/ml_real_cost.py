"""Cost of ``experiment=ml_real`` per cell, per run and per epoch: this tree against another.

Each tree (this one, and ``--compare-src``, the root of another checkout: its ``train.py``,
``conf/`` and ``src/``) runs every cell (method x dataset, seed 0) twice through its own
``train.py`` at ``experiment=ml_real``'s settings with early stopping off: ``E1`` and
``E2`` epochs (``--epochs``). From the two records' ``wall_time_s`` (the run from config
to record: getting the dataset, a look-up where the process has it cached; model set-up,
DeepWalk's walks, training, every epoch's evaluation of all splits)

    per epoch = (wall(E2) - wall(E1)) / (E2 - E1),   fixed per run = wall(E1) - E1 * per epoch.

A tree's runs of one dataset are one sweep, one process: it runs every method for
one epoch first (not timed), then every method for E1 epochs, then for E2. The untimed
runs pay what only a process's first run of a dataset or method pays (processing the raw
files, loading the dataset, which then stays cached in the process, and first-use costs
such as imports), which would otherwise land in the E1 runs alone: per-epoch costs would
come out low and fixed costs high. So the fixed part is that of a run after the first in
a sweep process, as nearly all runs of a sweep are; a sweep process's one-off loading is
in neither part. The trees take turns dataset by dataset (one process at a time, one
thread: run side by side, a tree's light cells were timed beside the other's heavy ones
and came out up to 1.5x off). A per-epoch cost below what the machine's noise on the
fixed part allows (DeepWalk's walks and skip-gram take seconds) is printed as "noise",
and such a cell's cost is its fixed part alone in both trees.

The per-run and per-cell cost of the sweep at each tree's speed then takes the epochs that
the runs of a finished sweep took (``--sweep``, its records): run = fixed + epochs x per
epoch, summed over the cell's seeds. The epochs of a run do not depend on the tree where
results are unchanged (docs/speed.md lists the changes that moved them by float rounding
only).

    python benchmarks/ml_real_cost.py --compare-src /tmp/mlbase --mirror ../shared/data \\
        --sweep outputs/multirun/repro_ml_real [--epochs 2 12] [--models ...] [--datasets ...]

(``mkdir -p /tmp/mlbase && git archive 33e6264 | tar -x -C /tmp/mlbase`` gives the tree
before the speed work.) Prints a Markdown table; ``--json`` also writes the measurements.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from reproduce_common import sweep_records

THIS_ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("humloc", "eukloc", "pcg", "dblp", "blogcatalog")
#: A per-epoch cost whose E2 - E1 epochs add less than this many seconds, or this share of
#: the fixed part, to a run is not told apart from timing noise.
NOISE_FLOOR_S, NOISE_SHARE = 0.2, 0.1
#: Epochs of each timed process's untimed warm-up runs (so E1 must be more).
WARM_UP_EPOCHS = 1
MODELS = ("mlp", "deepwalk", "gcn", "gat", "sage_sampled", "h2gcn", "gcn_lpa", "lanc")


def _sweep_command(root: Path, work: Path, mirror: str, overrides: list[str], name: str):
    """``train.py -m`` of the tree at ``root``, in-process and sequential, one thread."""
    cmd = [sys.executable, str(root / "train.py"), "-m", "hydra/launcher=basic"]
    cmd += ["experiment=ml_real", "seed=0", "num_threads=1", "task.patience=null"]
    cmd += [f"paths.data_mirror={mirror}", f"paths.data_dir={work / 'data'}"]
    cmd += [f"hydra.sweep.dir={work / name}", *overrides]
    env = dict(os.environ, PYTHONPATH=str(root / "src"), OMP_NUM_THREADS="1")
    return cmd, env


def _records(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*/result.json"))]


def _measure_trees(trees: dict[str, Path], args) -> dict[str, list[dict]]:
    """Run each tree's sweep of each dataset (warm-up runs, then the timed ones), the trees
    taking turns (one process at a time, so both see the same machine); timed records by
    tree."""
    models = ",".join(args.models)
    e1, e2 = args.epochs
    work = {name: Path(tempfile.mkdtemp(prefix=f"ml_cost_{name}_")) for name in trees}
    # The first override varies slowest: every method's warm-up, then E1, then E2.
    epochs = f"trainer.max_epochs={WARM_UP_EPOCHS},{e1},{e2}"
    steps = [
        (name, f"timed_{dataset}", [epochs, f"model={models}", f"dataset={dataset}"])
        for dataset in args.datasets
        for name in trees
    ]
    started = time.monotonic()
    for i, (name, folder, overrides) in enumerate(steps, 1):
        cmd, env = _sweep_command(trees[name], work[name], args.mirror, overrides, folder)
        with open(work[name] / f"{folder}.log", "w") as log:
            rc = subprocess.run(
                cmd, env=env, cwd=trees[name], stdout=log, stderr=subprocess.STDOUT, check=False
            ).returncode
        if rc:
            tail = (work[name] / f"{folder}.log").read_text()[-3000:]
            raise SystemExit(
                f"{name} tree's {folder} sweep failed (rc {rc}; its runs are in "
                f"{work[name]}):\n{tail}"
            )
        print(
            f"  [{time.monotonic() - started:6.0f} s] {i}/{len(steps)}: {name} {folder}", flush=True
        )
    records = {
        name: _timed([r for d in args.datasets for r in _records(work[name] / f"timed_{d}")])
        for name in trees
    }
    for name, folder in work.items():
        if args.keep_runs:
            print(f"  {name} tree's runs kept in {folder}")
        else:
            shutil.rmtree(folder)
    return records


def _timed(records: list[dict]) -> list[dict]:
    """``records`` without the warm-up runs (a failed one is kept: it fails the cell)."""
    return [r for r in records if r["status"] != "ok" or int(r["epochs_run"]) != WARM_UP_EPOCHS]


def _per_cell_costs(records: list[dict], epochs: tuple[int, int]) -> dict[tuple, dict]:
    """``(model, dataset) -> {per_epoch_s, fixed_s}`` from the E1 and E2 records."""
    walls: dict[tuple, dict[int, float]] = defaultdict(dict)
    for r in records:
        if r["status"] != "ok":
            raise SystemExit(f"{r['model']} on {r['dataset']}: run {r['status']}: {r.get('error')}")
        walls[(r["model"], r["dataset"])][int(r["epochs_run"])] = float(r["wall_time_s"])
    e1, e2 = epochs
    costs = {}
    for cell, by_epochs in walls.items():
        if set(by_epochs) != {e1, e2}:
            raise SystemExit(
                f"{cell}: expected runs of {e1} and {e2} epochs, got {sorted(by_epochs)}"
            )
        per_epoch = (by_epochs[e2] - by_epochs[e1]) / (e2 - e1)
        fixed = by_epochs[e1] - e1 * per_epoch
        # The epochs' share of the longer run is within the noise of its fixed part.
        noise = per_epoch * (e2 - e1) < max(NOISE_FLOOR_S, NOISE_SHARE * fixed)
        costs[cell] = {"per_epoch_s": per_epoch, "fixed_s": fixed, "noise": noise}
    return costs


def _sweep_epochs(sweep: Path | None) -> dict[tuple, dict]:
    """Per cell of a finished sweep: its runs' epochs and measured wall times (ok runs)."""
    cells: dict[tuple, dict] = defaultdict(lambda: {"epochs": [], "walls": []})
    for r in sweep_records([sweep]) if sweep else []:
        cell = cells[(r["model"], r["dataset"])]
        cell["epochs"].append(int(r["epochs_run"]))
        cell["walls"].append(float(r["wall_time_s"]))
    return cells


def _epoch_cell(cost: dict) -> str:
    value = f"{cost['per_epoch_s'] * 1e3:.1f} ms"
    return f"noise ({value})" if cost["noise"] else value


def _table(costs: dict[str, dict], sweep: dict[tuple, dict], args) -> str:
    old, new = costs["old"], costs["new"]
    lines = [
        "| cell | per epoch before | per epoch now | ratio | fixed per run before / now "
        "| sweep epochs (runs) | cell before | cell now | measured in the sweep |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    totals = {"old": 0.0, "new": 0.0, "measured": 0.0}
    missing = []
    for dataset in args.datasets:
        for model in args.models:
            cell = (model, dataset)
            o, n = old[cell], new[cell]
            runs = sweep.get(cell)
            noisy = o["noise"] or n["noise"]
            ratio = "noise" if noisy else f"{o['per_epoch_s'] / n['per_epoch_s']:.2f}x"
            head = (
                f"| {model} / {dataset} | {_epoch_cell(o)} | {_epoch_cell(n)} | {ratio} | "
                f"{o['fixed_s']:.1f} / {n['fixed_s']:.1f} s"
            )
            if not runs or len(runs["epochs"]) < args.seeds:
                missing.append(f"{model} / {dataset}")
                lines.append(
                    f"{head} | {len(runs['epochs']) if runs else 0} of {args.seeds} "
                    "runs finished | | | |"
                )
                continue
            epochs = runs["epochs"]
            # Epochs within the noise count as free in both trees (the cell is its set-up).
            before, now = (
                sum(c["fixed_s"] + e * (0.0 if noisy else c["per_epoch_s"]) for e in epochs)
                for c in (o, n)
            )
            measured = sum(runs["walls"])
            totals["old"] += before
            totals["new"] += now
            totals["measured"] += measured
            lines.append(
                f"{head} | {sum(epochs)} ({len(epochs)}) | {before / 60:.1f} min | "
                f"{now / 60:.1f} min | {measured / 60:.1f} min |"
            )
    ratio = totals["old"] / totals["new"] if totals["new"] else float("nan")
    lines.append(
        f"| **cells with {args.seeds} finished runs** | | | | | | "
        f"**{totals['old'] / 3600:.2f} h** | **{totals['new'] / 3600:.2f} h** ({ratio:.2f}x) | "
        f"{totals['measured'] / 3600:.2f} h |"
    )
    if missing:
        lines.append("")
        lines.append(
            f"Not in the totals (the sweep has fewer than {args.seeds} finished runs): "
            + ", ".join(missing)
            + "."
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--compare-src",
        required=True,
        type=Path,
        help="root of the other checkout (train.py, conf/, src/)",
    )
    parser.add_argument("--mirror", required=True, help="data mirror, e.g. ../shared/data")
    parser.add_argument(
        "--sweep",
        type=Path,
        default=None,
        help="a finished ml_real sweep dir: its runs' epochs scale the costs",
    )
    parser.add_argument("--epochs", type=int, nargs=2, default=[2, 12], metavar=("E1", "E2"))
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--seeds", type=int, default=3, help="runs per cell in a full sweep")
    parser.add_argument("--json", type=Path, default=None, help="also write the measurements")
    parser.add_argument(
        "--keep-runs", action="store_true", help="keep the timed runs' folders (default: removed)"
    )
    args = parser.parse_args()
    # each tree's sweep runs in that tree's folder: a relative mirror would point elsewhere
    args.mirror = str(Path(args.mirror).resolve())
    if not Path(args.mirror).is_dir():
        parser.error(f"--mirror {args.mirror} is not a folder")
    e1, e2 = args.epochs
    if not WARM_UP_EPOCHS < e1 < e2:
        parser.error(
            f"--epochs needs {WARM_UP_EPOCHS} < E1 < E2 ({WARM_UP_EPOCHS}-epoch runs are "
            f"each process's untimed warm-up), got {e1} {e2}"
        )
    for name, choices in (("models", MODELS), ("datasets", DATASETS)):
        bad = sorted(set(getattr(args, name)) - set(choices))
        if bad:
            parser.error(f"unknown {name} {bad}; choose from {list(choices)}")
    other = args.compare_src.resolve()
    if not (other / "train.py").is_file() or not (other / "src").is_dir():
        parser.error(f"--compare-src {other} has no train.py and src/: give a checkout's root")
    if args.sweep is not None and not args.sweep.is_dir():
        parser.error(f"--sweep {args.sweep} is not a folder")
    print(
        f"timing {len(args.models)} methods x {len(args.datasets)} datasets at {e1} and {e2} "
        f"epochs in both trees (this one and {other}), one thread, taking turns; "
        f"each process first runs every method for {WARM_UP_EPOCHS} epoch, not timed"
    )
    records = _measure_trees({"old": other, "new": THIS_ROOT}, args)
    costs = {name: _per_cell_costs(recs, (e1, e2)) for name, recs in records.items()}
    sweep = _sweep_epochs(args.sweep)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    name: {f"{m}:{d}": c for (m, d), c in cells.items()}
                    for name, cells in costs.items()
                },
                indent=1,
            )
        )
    print()
    print(_table(costs, sweep, args))


if __name__ == "__main__":
    main()
