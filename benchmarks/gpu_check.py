"""Every task type trained through the framework on a GPU: does it run, is it repeatable,
and did it use the GPU.

One short run per case (``trainer.max_epochs``, default 2) of node classification (the
four Cora encoders), link prediction (Cora; WN18RR through the relational decoder), graph
classification and regression (MUTAG; the synthetic triangle counts), multi-label node
classification (PCG: LANC, H2GCN, GCN-LPA, sampled SAGE) and multi-label graph
classification (a small synthetic set of cycles, stars and paths), each run twice with
``trainer.accelerator=gpu`` and the default ``trainer.deterministic=true``. Where that
stops on an operation torch has no deterministic CUDA kernel for, the case is run again
with ``trainer.deterministic=warn`` and the line says so. Printed per case: status, the
two runs' test metrics (equal or not), wall time of one run and the peak GPU memory it
allocated (0 would mean the run never reached the GPU). Last, without ``--only``, a
four-run Karate sweep through ``train.py -m`` and the default pool launcher (two forked
workers), which must find CUDA usable in its workers.

    python benchmarks/gpu_check.py --mirror ../shared/data [--epochs 2] [--out DIR]
    python benchmarks/gpu_check.py --mirror ../shared/data --accelerator cpu   # the plumbing

(On the CPU the runs go through Lightning's loop as GPU runs do, not the lean CPU loop.)

The raw files it reads: Planetoid/Cora, TUDataset/MUTAG, WordNet18RR and MLGNC/pcg* of
the mirror (``benchmarks/gpu_stage.py`` copies them, with the wheels a stock PyTorch image
lacks, for a GPU machine without network). Exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir
from torch_geometric.data import Data

from graphnetz.config_dir import CONF_DIR
from graphnetz.training.run import run_experiment

ROOT = Path(__file__).resolve().parents[1]
#: (what it checks, overrides); ``load`` marks the case whose data the script builds.
CASES = [
    ("node_cls", ["dataset=cora", "model=gcn"]),
    ("node_cls", ["dataset=cora", "model=gat"]),
    ("node_cls", ["dataset=cora", "model=sage"]),
    ("node_cls", ["dataset=cora", "model=gt"]),
    ("link_pred", ["dataset=cora", "task=link_pred", "model=gcn"]),
    ("link_pred, relational", ["dataset=wn18rr", "model=gcn", "task.rank_sample=200"]),
    ("graph_cls", ["dataset=mutag", "model=gin"]),
    ("graph_cls", ["dataset=mutag", "model=gat"]),
    ("graph_reg", ["dataset=triangles", "model=gin", "dataset.loader.num_graphs=200"]),
    ("ml_node_cls", ["dataset=pcg", "model=lanc"]),
    ("ml_node_cls", ["dataset=pcg", "model=h2gcn"]),
    ("ml_node_cls", ["dataset=pcg", "model=gcn_lpa"]),
    ("ml_node_cls", ["dataset=pcg", "model=sage_sampled"]),
    ("ml_graph_cls", ["dataset=peptides_func", "model=gin", "load"]),
]


def shapes(num_graphs: int = 60) -> list[Data]:
    """Cycles, stars and paths of 5-10 nodes, x = [1, degree / 4], three labels read off
    the structure (cycle, star, >= 8 nodes), a tenth of them missing (NaN)."""
    gen = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(num_graphs):
        kind, n = i % 3, int(torch.randint(5, 11, (1,), generator=gen))
        if kind == 1:  # star: node 0 joined to every other
            src, dst = torch.zeros(n - 1, dtype=torch.long), torch.arange(1, n)
        else:  # cycle (kind 0) or path (kind 2)
            src = torch.arange(n if kind == 0 else n - 1)
            dst = (src + 1) % n
        edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], 1)
        degree = torch.bincount(edge_index[0], minlength=n).float()
        y = torch.tensor([[kind == 0, kind == 1, n >= 8]], dtype=torch.float)
        y[torch.rand(y.shape, generator=gen) < 0.1] = math.nan
        x = torch.stack([torch.ones(n), degree / 4], 1)
        graphs.append(Data(x=x, edge_index=edge_index, y=y))
    return graphs


def configure(overrides: list[str], args, root: Path, deterministic: str):
    base = [
        f"paths.data_dir={root / 'data'}",
        f"paths.output_dir={root / 'out'}",
        f"paths.data_mirror={Path(args.mirror).resolve()}",
        f"trainer.accelerator={args.accelerator}",
        f"trainer.max_epochs={args.epochs}",
        f"trainer.deterministic={deterministic}",
    ]
    if args.accelerator == "cpu":  # any trainer key the lean loop does not take: Lightning's
        base.append("+trainer.benchmark=false")  # loop, the one every GPU run goes through
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=[*base, *overrides])


def one_run(overrides: list[str], load, args, root: Path, deterministic: str, tag: str):
    """The record of one run, its wall time and the peak GPU memory it allocated (MB)."""
    gpu = torch.cuda.is_available()
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    cfg = configure(overrides, args, root, deterministic)
    start = time.perf_counter()
    record = run_experiment(cfg, root / "runs" / tag, load_data=load)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**20 if gpu else float("nan")
    return record, seconds, peak


def check_case(what: str, overrides: list[str], args, root: Path) -> dict:
    load = shapes if "load" in overrides else None
    overrides = [o for o in overrides if o != "load"]
    tag = "_".join(o.split("=")[1] for o in overrides[:2])
    mode, runs = "true", []
    for repeat in range(2):
        record, seconds, peak = one_run(overrides, load, args, root, mode, f"{tag}_{repeat}")
        if repeat == 0 and record.status != "ok" and "determinis" in str(record.reason):
            mode = "warn"  # torch lacks a deterministic CUDA kernel for one of its ops
            record, seconds, peak = one_run(overrides, load, args, root, mode, f"{tag}_w")
        runs.append((record, seconds, peak))
    (first, seconds, peak), (second, _, _) = runs
    test_first = first.metrics.get("test", {}) if first.status == "ok" else {}
    test_second = second.metrics.get("test", {}) if second.status == "ok" else {}
    return {
        "case": what,
        "overrides": overrides,
        "status": first.status if first.status == second.status else "differs",
        "reason": None if first.status == "ok" else str(first.reason).splitlines()[0][:300],
        "deterministic": mode,
        "repeatable": test_first == test_second and bool(test_first),
        "test": test_first,
        "wall_s": round(seconds, 2),
        "gpu_peak_mb": round(peak, 1),
    }


def show(i: int, r: dict) -> None:
    metric = ", ".join(f"{k} {v:.3f}" for k, v in list(r["test"].items())[:2])
    print(
        f"[{i:2d}] {r['case']:22s} {' '.join(r['overrides'][:2]):30s} "
        f"{r['status']:7s} deterministic={r['deterministic']:4s} "
        f"repeatable={str(r['repeatable']):5s} {r['wall_s']:6.1f} s "
        f"GPU peak {r['gpu_peak_mb']:8.1f} MB  {metric}"
        + (f"\n      {r['reason']}" if r["reason"] else ""),
        flush=True,
    )


def check_pool_sweep(args, root: Path) -> dict:
    """A small sweep through ``train.py -m`` and the default pool launcher (two forked
    workers): the launching process must leave CUDA to the workers."""
    sweep_dir = root / "sweep"
    cmd = [
        sys.executable, str(ROOT / "train.py"), "-m", "dataset=karate", "model=gcn,gat",
        "seed=0,1", f"trainer.accelerator={args.accelerator}", f"trainer.max_epochs={args.epochs}",
        "hydra.launcher.n_jobs=2", f"hydra.sweep.dir={sweep_dir}",
        f"paths.data_dir={root / 'data'}", f"paths.data_mirror={Path(args.mirror).resolve()}",
    ]  # fmt: skip
    if args.accelerator == "cpu":
        cmd.append("+trainer.benchmark=false")
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    records = [json.loads(p.read_text()) for p in sorted(sweep_dir.rglob("result.json"))]
    failed = [r.get("reason") for r in records if r.get("status") != "ok"]
    ok = done.returncode == 0 and len(records) == 4 and not failed
    reason = None if ok else (failed[0] if failed else done.stderr[-300:] or "no records")
    return {
        "case": "pool sweep (fork)",
        "overrides": ["dataset=karate", "model=gcn,gat", "seed=0,1"],
        "status": "ok" if ok else "failed",
        "reason": None if reason is None else str(reason).splitlines()[0][:300],
        "deterministic": "true",
        "repeatable": None,
        "test": {},
        "wall_s": round(time.perf_counter() - start, 2),
        "gpu_peak_mb": float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", required=True, help="raw-data mirror, e.g. ../shared/data")
    parser.add_argument("--accelerator", default="gpu", choices=["gpu", "cpu"])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--only", default=None, help="comma-separated case numbers (from 0)")
    parser.add_argument("--out", default=None, help="folder for gpu_check.json")
    args = parser.parse_args()
    if args.accelerator == "gpu" and not torch.cuda.is_available():
        parser.error(
            "--accelerator gpu: torch sees no CUDA GPU here (--accelerator cpu checks the plumbing)"
        )
    if args.epochs < 1:
        parser.error(f"--epochs must be >= 1, got {args.epochs}")
    chosen = range(len(CASES)) if args.only is None else [int(i) for i in args.only.split(",")]
    device = torch.cuda.get_device_name() if args.accelerator == "gpu" else "cpu"
    print(f"torch {torch.__version__}, {device}, {args.epochs} epochs per run", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        for i in chosen:
            what, overrides = CASES[i]
            r = check_case(what, overrides, args, Path(tmp))
            results.append(r)
            show(i, r)
        if args.only is None:
            results.append(check_pool_sweep(args, Path(tmp)))
            show(len(CASES), results[-1])
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        summary = {"torch": torch.__version__, "device": device, "cases": results}
        (Path(args.out) / "gpu_check.json").write_text(json.dumps(summary, indent=1))
    failed = [r["case"] for r in results if r["status"] != "ok"]
    print(f"{len(results) - len(failed)} of {len(results)} cases ran", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
