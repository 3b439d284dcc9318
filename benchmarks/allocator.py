"""Per-epoch time with freed memory kept for reuse (graphnetz.training.allocator) and
without it (``GRAPHNETZ_KEEP_FREED_MEMORY=0``), on the real pipeline.

Each case runs in child processes, the two settings alternating ``--rounds`` times: a
child runs the case once for one epoch, untimed, then for ``--short`` and for ``--long``
epochs (``run_experiment``, as a sweep worker runs one run after another). The untimed
run pays what only a process's first run pays (loading the dataset, which stays cached
in the process, and first-use costs such as imports), so the two timed runs differ only
in their epochs: the per-epoch time is the difference of their CPU time (user and
system: page faults count as system time, and other jobs on the machine blur it less
than wall time) over the extra epochs, and building the model and the first epoch's
allocations drop out. The fastest per-epoch time of each setting is kept and their ratio
printed, beside the page faults per epoch (a count, which the machine's load does not
blur; 0 where the longer run faulted no more than the shorter one), with a check that
both settings gave the very same history.

Processed datasets go to a temporary folder, removed at the end (raw files come from
``--mirror``), unless ``--data-dir`` names one to use and keep.

    python benchmarks/allocator.py --mirror ../shared/data
    python benchmarks/allocator.py --cases gat:ml_synthetic_features lanc:ml_real:dblp

A case is ``model:experiment[:dataset]``; ``-`` as the experiment means none.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from child_tree import children_data_dir

ROOT = Path(__file__).resolve().parents[1]
#: The runs with per-step tensors above glibc's 32 MiB mmap threshold. Small graphs
#: (Cora, MUTAG, the Karate job) allocate nothing that large: the setting changes nothing
#: there.
CASES = ("gat:ml_synthetic_features", "lanc:ml_real:dblp", "h2gcn:ml_real:blogcatalog")


def _overrides(case: str, epochs: int, out: str, mirror: str | None, data: str) -> list[str]:
    model, experiment, *dataset = case.split(":")
    overrides = [f"model={model}", f"trainer.max_epochs={epochs}", "num_threads=1"]
    overrides += [f"paths.output_dir={out}", f"paths.data_dir={data}"]
    if experiment != "-":
        overrides.insert(0, f"experiment={experiment}")
    if dataset:
        overrides.append(f"dataset={dataset[0]}")
    if mirror:
        overrides.append(f"paths.data_mirror={mirror}")
    return overrides


def child(case: str, short: int, long: int, mirror: str | None, data: str) -> dict:
    """Run ``case`` for one epoch (untimed: the process's first run loads the dataset),
    then for ``short`` and ``long`` epochs, in this process."""
    from hydra import compose, initialize_config_dir

    from graphnetz.training.run import run_experiment

    timings, faults, histories = [], [], []
    with tempfile.TemporaryDirectory() as out:
        for i, epochs in enumerate((1, short, long)):
            with initialize_config_dir(str(ROOT / "conf"), version_base="1.3"):
                cfg = compose("config", overrides=_overrides(case, epochs, out, mirror, data))
            start, faulted = time.process_time(), _page_faults()
            record = run_experiment(cfg, Path(out) / f"run{i}")
            timings.append(time.process_time() - start)
            faults.append(_page_faults() - faulted)
            if record.status != "ok":
                raise SystemExit(f"{case}: {record.status} {record.reason} {record.error}")
            histories.append(record.history)
    del timings[0], faults[0], histories[0]  # the warm-up
    extra = long - short
    return {
        "per_epoch_s": (timings[1] - timings[0]) / extra,
        "faults_per_epoch": (faults[1] - faults[0]) / extra,
        "history": histories[1],
    }


def _page_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def measure(case: str, keep: bool, args) -> dict:
    env = {**os.environ, "GRAPHNETZ_KEEP_FREED_MEMORY": "1" if keep else "0"}
    cmd = [sys.executable, __file__, "--child", case, "--short", str(args.short)]
    cmd += ["--long", str(args.long), "--data-dir", args.data_dir]
    cmd += ["--mirror", args.mirror] if args.mirror else []
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{case} (keep={keep}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(args) -> None:
    """Time every case with both settings and print a line per case."""
    print(
        f"CPU time per epoch ({args.long} - {args.short} epochs, best of {args.rounds}), one thread"
    )
    for case in args.cases:
        runs = {True: [], False: []}
        for _ in range(args.rounds):
            for keep in (False, True):
                runs[keep].append(measure(case, keep, args))
        first = json.dumps(runs[False][0]["history"])  # as text: a NaN equals itself
        same = all(json.dumps(r["history"]) == first for r in runs[True] + runs[False])
        off = min(r["per_epoch_s"] for r in runs[False])
        on = min(r["per_epoch_s"] for r in runs[True])
        faults = [max(0, min(r["faults_per_epoch"] for r in runs[k])) for k in (False, True)]
        print(
            f"{case:28s} memory returned {off * 1000:7.0f} ms ({faults[0]:8.0f} page faults)"
            f"   kept {on * 1000:7.0f} ms ({faults[1]:6.0f})   {off / on:5.2f}x"
            f"   histories {'identical' if same else 'DIFFER'}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--mirror", default=None, help="data mirror, e.g. ../shared/data")
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where processed datasets go (kept); default: a temporary folder, removed at the end",
    )
    parser.add_argument("--short", type=int, default=1)
    parser.add_argument("--long", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.short < args.long:
        parser.error(f"--short and --long need 1 <= SHORT < LONG, got {args.short} {args.long}")
    if args.mirror:
        args.mirror = str(Path(args.mirror).resolve())
    if args.child:
        print(json.dumps(child(args.child, args.short, args.long, args.mirror, args.data_dir)))
        return
    with children_data_dir(args.data_dir, "allocator-data-") as args.data_dir:
        compare(args)


if __name__ == "__main__":
    main()
