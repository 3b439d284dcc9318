"""Per-epoch time of the multi-label sweep's slow cells, this tree against another one.

One epoch = one training step on the train rows (Adam 1e-2 / 5e-4, BCE, as the task does
it) + one evaluation forward of every node, at ``experiment=ml_real``'s settings (hidden
256, 2 layers, dropout 0.5), on the real graphs from the mirror (split 0). The old tree is
imported in a subprocess from ``--compare-src`` (e.g. ``git -C /work/main archive <commit>
| tar -x -C /tmp/mlbase``, then ``--compare-src /tmp/mlbase/src``); both runs use the same
seed; their logits and gradients of the first step (before any update: Adam turns
rounding-level differences of near-zero gradients into lr-sized steps) are checked to
agree before any ratio is printed, and the logits' difference after the timed epochs is
shown. The estimate scales each cell's measured ``ml_real`` hours (docs/multilabel.md,
3 seeds) by new / old per-epoch time; the number of epochs per run does not change,
because the same seed gives the same values up to float rounding.

    python benchmarks/multilabel_epochs.py --mirror ../shared/data --compare-src /tmp/mlbase/src \\
        [--cases lanc:dblp h2gcn:blogcatalog h2gcn:dblp] [--epochs 2] [--rounds 2] [--threads 1]
        [--device cuda]

``--device cuda`` times the epochs on a GPU (graph, model and optimiser there; the clock
read after the device finished its queued work).

Other jobs sharing the CPU move single timings by up to ~30 %, so the trees are measured
alternately (old, new, old, new, ... for ``--rounds``) and the fastest of each is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from child_tree import run_in_tree

#: Hours of the ml_real cells stated in docs/multilabel.md (3 seeds, 2 one-thread jobs).
ML_REAL_DATASETS = ("humloc", "eukloc", "pcg", "dblp", "blogcatalog")
SWEEP_HOURS = {"lanc:dblp": 3.4, "h2gcn:blogcatalog": 1.9}


def _time_epochs(case: str, mirror: str, epochs: int, threads: int, device: str) -> dict:
    import torch
    import torch.nn.functional as F

    from graphnetz.data import multilabel
    from graphnetz.models.multilabel import H2GCN, LANC

    torch.set_num_threads(threads)
    # trainer.deterministic=true, every run's default (on a GPU as =warn: go on where torch
    # has no deterministic CUDA kernel); cuBLAS needs the workspace Lightning sets for it
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=device != "cpu")
    try:  # as every run sets it (trees before it lack the module)
        from graphnetz.training.allocator import keep_freed_memory

        keep_freed_memory()
    except ImportError:
        pass
    model_name, dataset = case.split(":")
    loaders = {name: getattr(multilabel, f"load_{name}") for name in ML_REAL_DATASETS}
    classes = {"lanc": LANC, "h2gcn": H2GCN}
    with tempfile.TemporaryDirectory() as root:
        data = loaders[dataset](root, mirror=mirror)
    data = data.to(device)
    train = data.train_mask[:, 0] if data.train_mask.dim() == 2 else data.train_mask
    torch.manual_seed(0)
    model = classes[model_name](data.x.size(1), 256, data.y.size(1), num_layers=2, dropout=0.5)
    model = model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    sync = torch.cuda.synchronize if device.startswith("cuda") else lambda: None

    def clock() -> float:
        sync()
        return time.perf_counter()

    def epoch() -> tuple[float, float, torch.Tensor]:
        start = clock()
        model.train()
        opt.zero_grad()
        out = model(data.x, data.edge_index, output_nodes=train)
        F.binary_cross_entropy_with_logits(out, data.y[train]).backward()
        opt.step()
        mid = clock()
        model.eval()
        with torch.inference_mode():
            logits = model(data.x, data.edge_index)
        return mid - start, clock() - mid, logits.cpu()

    model.train()
    torch.manual_seed(1)
    first = model(data.x, data.edge_index, output_nodes=train)
    first.square().mean().backward()
    check = {
        "first_logits": first[:200].tolist(),
        "first_grads": [p.grad.flatten()[:2000].tolist() for p in model.parameters()],
    }
    torch.manual_seed(0)
    epoch()  # warm-up: builds cached operators and allocator pools
    # a run NaN-fills new tensors until its first evaluated epoch has ended, no longer
    # (graphnetz/training/nan_fill.py): time the epochs after it as a run pays them
    torch.utils.deterministic.fill_uninitialized_memory = False
    steps, evals = [], []
    for _ in range(epochs):
        step, evaluation, logits = epoch()
        steps.append(step)
        evals.append(evaluation)
    return {"step_s": min(steps), "eval_s": min(evals), "logits": logits[:200].tolist(), **check}


def _measure(case: str, args, src: str | None) -> dict:
    """Time ``case`` in a fresh process importing graphnetz from ``src`` (None: this tree)."""
    cmd = ["--_child", case, "--mirror", args.mirror]
    cmd += ["--epochs", str(args.epochs), "--threads", str(args.threads), "--device", args.device]
    return run_in_tree(__file__, cmd, src)


def _faster(a: dict, b: dict) -> dict:
    """Per phase, the faster of two measurements of the same tree (on a CPU the logits
    are equal; a GPU run is deterministic only where torch has the kernels)."""
    return {**a, "step_s": min(a["step_s"], b["step_s"]), "eval_s": min(a["eval_s"], b["eval_s"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", required=True, help="data mirror, e.g. ../shared/data")
    parser.add_argument("--compare-src", default=None, help="src/ of the tree to compare with")
    parser.add_argument("--cases", nargs="+", default=["lanc:dblp", "h2gcn:blogcatalog"])
    parser.add_argument("--epochs", type=int, default=2, help="timed epochs (min is reported)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs per tree")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.epochs < 1 or args.rounds < 1:
        parser.error(f"--epochs and --rounds must be >= 1, got {args.epochs}, {args.rounds}")
    if args._child:
        result = _time_epochs(args._child, args.mirror, args.epochs, args.threads, args.device)
        print(json.dumps(result))
        return
    import torch

    where = f"{args.threads} thread(s)" if args.device == "cpu" else args.device
    print(f"{where}; min of {args.epochs} epochs after one warm-up")
    print(f"{'case':20s} {'tree':5s} {'step s':>7s} {'eval s':>7s} {'epoch s':>8s}")
    for case in args.cases:
        trees = [("old", args.compare_src)] if args.compare_src else []
        results = {}
        for _ in range(args.rounds):
            for name, src in [*trees, ("new", None)]:
                r = _measure(case, args, src)
                best = results.get(name)
                results[name] = r if best is None else _faster(best, r)
        for name, r in results.items():
            per_epoch = r["step_s"] + r["eval_s"]
            print(
                f"{case:20s} {name:5s} {r['step_s']:7.2f} {r['eval_s']:7.2f} {per_epoch:8.2f}",
                flush=True,
            )
        if "old" in results:
            agree = all(
                torch.allclose(torch.tensor(a), torch.tensor(b), rtol=1e-4, atol=1e-6)
                for a, b in zip(
                    [results["old"]["first_logits"], *results["old"]["first_grads"]],
                    [results["new"]["first_logits"], *results["new"]["first_grads"]],
                    strict=True,
                )
            )
            if not agree:  # before any ratio: timings of different computations mean nothing
                raise SystemExit(f"{case}: old and new first-step logits or gradients disagree")
            old, new = (torch.tensor(results[k]["logits"]) for k in ("old", "new"))
            ratio = (results["old"]["step_s"] + results["old"]["eval_s"]) / (
                results["new"]["step_s"] + results["new"]["eval_s"]
            )
            diff = (old - new).abs().max().item()
            hours = SWEEP_HOURS.get(case)
            estimate = f"; ml_real {hours} h -> {hours / ratio:.1f} h" if hours else ""
            print(
                f"{case:20s} old/new per epoch {ratio:.2f}x; logits after training max |diff| {diff:.1e}{estimate}"
            )


if __name__ == "__main__":
    main()
