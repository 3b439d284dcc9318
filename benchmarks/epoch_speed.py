"""Per-epoch cost of the node encoders on a Planetoid graph, beside the arithmetic floor.

Each encoder (GCN, GAT, SAGE, GT, MLP, built from its model config as a run builds it)
trains in a plain loop: one training step plus one evaluation forward of all splits under
``no_grad`` per epoch. The median epoch time is printed beside the FLOP floor of
``benchmarks/flops.py`` (measured dense matrix-product rate of this process).

``--compare-src DIR`` measures another source tree (e.g. the main checkout's ``src``) in
the same run: both sides run in child processes, alternating ``--repeats`` times, and the
printed ratio is the median of theirs over the median of ours. Timings on a busy machine
are noisy; read ratios, and keep ``--threads 1``.

Processed datasets go to a temporary folder, removed at the end (raw files come from
``--mirror``), unless ``--data-dir`` names one to use and keep.

    python benchmarks/epoch_speed.py --mirror ../shared/data [--compare-src ../main/src]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from child_tree import children_data_dir, run_in_tree

HERE = Path(__file__).resolve().parent
MODELS = ("gcn", "gat", "sage", "gt", "mlp")


def measure(
    dataset: str, models: list[str], epochs: int, mirror: str | None, data_dir: str
) -> dict:
    """Median ms per epoch and final test accuracy per model (this process's graphnetz)."""
    import torch
    import torch.nn.functional as F
    from hydra import compose, initialize_config_dir

    sys.path.insert(0, str(HERE))
    from flops import epoch_flops, gemm_rate

    from graphnetz.config_dir import CONF_DIR
    from graphnetz.data.loading import load_dataset
    from graphnetz.training.build import build_model
    from graphnetz.training.seeding import seed_everything

    results = {"gemm_flops": gemm_rate()}
    for name in models:
        overrides = [f"dataset={dataset}", f"model={name}", f"paths.data_dir={data_dir}"]
        if mirror:
            overrides.append(f"paths.data_mirror={mirror}")
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            cfg = compose("config", overrides=overrides)
        data = load_dataset(cfg.dataset.loader, cfg.paths.data_dir, cfg.paths.data_mirror)
        classes = int(data.y.max()) + 1
        seed_everything(0)
        model = build_model(cfg.model, "node", data.num_features, classes)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        times = []
        for _ in range(epochs):
            start = time.perf_counter()
            model.train()
            optimizer.zero_grad()
            out = model(data.x, data.edge_index)
            F.cross_entropy(out[data.train_mask], data.y[data.train_mask]).backward()
            optimizer.step()
            model.eval()
            with torch.no_grad():
                pred = model(data.x, data.edge_index).argmax(-1)
            times.append(time.perf_counter() - start)
        test = data.test_mask
        hidden = cfg.model.hidden_channels
        dims = [data.num_features] + [hidden] * (cfg.model.num_layers - 1) + [classes]
        nnz = int(torch.count_nonzero(data.x))
        flops = epoch_flops(name, data.num_nodes, data.edge_index.size(1), nnz, dims)
        results[name] = {
            "ms": 1e3 * statistics.median(times[len(times) // 5 :]),
            "test_acc": float((pred[test] == data.y[test]).float().mean()),
            "flops": flops,
        }
    return results


def child(src: str | None, args) -> dict:
    cmd = ["--child", "--dataset", args.dataset, "--epochs", str(args.epochs)]
    cmd += ["--threads", str(args.threads), "--models", ",".join(args.models)]
    cmd += ["--data-dir", args.data_dir]
    if args.mirror:
        cmd += ["--mirror", args.mirror]
    return run_in_tree(__file__, cmd, src, OMP_NUM_THREADS=str(args.threads))


def compare(args) -> None:
    """Measure each side ``--repeats`` times, alternating, and print the table."""
    ours_src = str(HERE.parent / "src")
    sides = {"ours": ours_src} | ({"theirs": args.compare_src} if args.compare_src else {})
    runs: dict[str, list[dict]] = {side: [] for side in sides}
    for r in range(args.repeats):
        for side, src in sides.items():
            runs[side].append(child(src, args))
            print(f"  repeat {r + 1}/{args.repeats} {side} done", flush=True)
    rate = statistics.median(run["gemm_flops"] for run in runs["ours"])
    print(
        f"{args.dataset}, {args.epochs} epochs, {args.threads} thread(s); "
        f"dense GEMM rate {rate / 1e9:.1f} GFLOP/s"
    )
    head = f"{'model':6s} {'ours ms':>8s} {'floor ms':>8s} {'MFLOP':>8s} {'acc':>6s}"
    if "theirs" in runs:
        head += f" {'theirs ms':>9s} {'acc':>6s} {'speed-up':>8s}"
    print(head)
    for name in args.models:
        ours = statistics.median(run[name]["ms"] for run in runs["ours"])
        flops = runs["ours"][0][name]["flops"]
        line = (
            f"{name:6s} {ours:8.2f} {1e3 * flops / rate:8.2f} {flops / 1e6:8.1f} "
            f"{runs['ours'][0][name]['test_acc']:6.3f}"
        )
        if "theirs" in runs:
            theirs = statistics.median(run[name]["ms"] for run in runs["theirs"])
            line += f" {theirs:9.2f} {runs['theirs'][0][name]['test_acc']:6.3f} "
            line += f"{theirs / ours:7.2f}x"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", default=os.environ.get("GRAPHNETZ_DATA_MIRROR"))
    parser.add_argument(
        "--data-dir",
        default=None,
        help="where processed datasets go (kept); default: a temporary folder, removed at the end",
    )
    parser.add_argument("--dataset", default="cora")
    parser.add_argument("--models", type=lambda s: s.split(","), default=list(MODELS))
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--compare-src", default=None, help="another tree's src/ to measure")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        import torch

        torch.set_num_threads(args.threads)
        result = measure(args.dataset, args.models, args.epochs, args.mirror, args.data_dir)
        print(json.dumps(result))
        return
    with children_data_dir(args.data_dir, "epoch-speed-data-") as args.data_dir:
        compare(args)


if __name__ == "__main__":
    main()
