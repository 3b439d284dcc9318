"""A cell's seeds trained stacked against the same seeds trained one at a time, in the
framework (``graphnetz.training.stacked``), in one process, alternating.

For each model: every seed's run alone (``train_and_evaluate``, what a sweep job does
after loading) and all seeds stacked (``train_stacked``), ``--repeats`` times in turn;
the script first checks that every stacked seed's history equals its run alone, then
prints the median times, their ratio and the time per seed-epoch. Both sides build their
runs (split, initialisation) inside the timing; the dataset is loaded before.

    python benchmarks/stacked_seeds.py [--dataset karate] [--models gcn,gat,sage,gt,mlp]
        [--seeds 10] [--epochs 100] [--repeats 3] [--mirror ../shared/data]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch
from hydra import compose, initialize_config_dir

from graphnetz.config_dir import CONF_DIR
from graphnetz.training.pipeline import train_and_evaluate
from graphnetz.training.resolve import resolve_run
from graphnetz.training.stacked import train_stacked


def specs(dataset: str, model: str, seeds: int, epochs: int, mirror: str | None, data_dir: str):
    overrides = [f"dataset={dataset}", f"model={model}", f"trainer.max_epochs={epochs}"]
    overrides += ["num_threads=1", f"paths.data_dir={data_dir}"]
    if mirror:
        overrides.append(f"paths.data_mirror={mirror}")
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return [
            resolve_run(compose("config", overrides=[*overrides, f"seed={s}"]))
            for s in range(seeds)
        ]


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default="karate")
    parser.add_argument("--models", default="gcn,gat,sage,gt,mlp")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mirror", default=None)
    args = parser.parse_args()
    if args.seeds < 2 or args.epochs < 1 or args.repeats < 1:
        parser.error("need --seeds >= 2, --epochs >= 1 and --repeats >= 1")
    torch.set_num_threads(1)
    data_dir = tempfile.mkdtemp(prefix="stacked-seeds-")
    print(f"{args.dataset}, {args.seeds} seeds x {args.epochs} epochs, one thread")
    for model in args.models.split(","):
        runs = specs(args.dataset, model, args.seeds, args.epochs, args.mirror, data_dir)
        train_and_evaluate(runs[0])  # loads the dataset (a sweep's worker keeps it)
        alone_times, stacked_times = [], []
        for _ in range(args.repeats):
            seconds, alone = timed(lambda runs=runs: [train_and_evaluate(s) for s in runs])
            alone_times.append(seconds)
            seconds, stacked = timed(lambda runs=runs: train_stacked(runs))
            stacked_times.append(seconds)
            for a, b in zip(alone, stacked, strict=True):
                if a.history != b.trained.history:
                    raise SystemExit(f"{model}: a stacked seed differs from its run alone")
        one, together = statistics.median(alone_times), statistics.median(stacked_times)
        per_epoch = 1000 * together / (args.seeds * args.epochs)
        print(
            f"  {model:5s} one at a time {one:6.2f} s  stacked {together:6.2f} s  "
            f"ratio {one / together:5.2f}x  ({per_epoch:.2f} ms per seed-epoch stacked; "
            "histories identical)"
        )


if __name__ == "__main__":
    main()
