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
allocated beyond what was allocated when it started (memory left by earlier cases does
not count; none fails the case: the run never reached the GPU); runs under
``deterministic=true`` that differ fail it too. Last (case 14), a four-run Karate sweep
through ``train.py -m`` and the default pool launcher (two forked workers), which must
find CUDA usable in its workers.

    python benchmarks/gpu_check.py --mirror ../shared/data [--epochs 2] [--out DIR]
    python benchmarks/gpu_check.py --mirror ../shared/data --accelerator cpu   # the plumbing

(On the CPU the runs go through Lightning's loop as GPU runs do, not the lean CPU loop.)

The raw files it reads: Planetoid/Cora, TUDataset/MUTAG, WordNet18RR and MLGNC/pcg* of
the mirror (``benchmarks/gpu_stage.py`` copies them, with the wheels a stock PyTorch image
lacks, for a GPU machine without network). Exits 1 if any case failed; ``--out`` keeps
``gpu_check.json`` up to date after every case.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from torch_geometric.data import Data

from graphnetz.config_dir import CONF_DIR
from graphnetz.training.lean_loop import lean_trainer_refusal
from graphnetz.training.run import run_experiment

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
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
#: the last case: a sweep through ``train.py -m`` and the pool launcher
POOL_SWEEP = ["dataset=karate", "model=gcn,gat", "seed=0,1"]


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


def gpu_peak_mb(block: Callable[[], T], gpu: bool) -> tuple[T, float]:
    """``block()``, and the most GPU memory it had allocated at once beyond what was
    allocated when it started, in MB (NaN without ``gpu``).

    After ``reset_peak_memory_stats`` the peak starts at the memory still allocated:
    measured from zero, tensors left by earlier runs would pass as this one's.
    """
    if not gpu:
        return block(), math.nan
    gc.collect()  # what earlier runs left unreferenced is freed, not counted in the start
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    result = block()
    return result, (torch.cuda.max_memory_allocated() - before) / 2**20


def one_run(overrides: list[str], load, args, root: Path, deterministic: str, tag: str):
    """The record of one run, its wall time and the peak GPU memory it allocated (MB)."""
    cfg = configure(overrides, args, root, deterministic)
    loop = lean_trainer_refusal(OmegaConf.to_container(cfg.trainer, resolve=True))

    def timed_run():
        start = time.perf_counter()
        record = run_experiment(cfg, root / "runs" / tag, load_data=load)
        return record, time.perf_counter() - start

    (record, seconds), peak = gpu_peak_mb(timed_run, args.accelerator == "gpu")
    return record, seconds, peak, "lean" if loop is None else "lightning"


def same_metrics(a: dict, b: dict) -> bool:
    """Equal test metrics, NaN equal to NaN (a metric undefined on both runs)."""
    return (
        bool(a)
        and a.keys() == b.keys()
        and all(a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])) for k in a)
    )


def check_case(what: str, overrides: list[str], args, root: Path) -> dict:
    load = shapes if "load" in overrides else None
    overrides = [o for o in overrides if o != "load"]
    tag = "_".join(o.split("=")[1] for o in overrides[:2])
    mode, runs = "true", []
    for repeat in range(2):
        run = one_run(overrides, load, args, root, mode, f"{tag}_{repeat}")
        if repeat == 0 and run[0].status != "ok" and "determinis" in str(run[0].reason):
            mode = "warn"  # torch lacks a deterministic CUDA kernel for one of its ops
            run = one_run(overrides, load, args, root, mode, f"{tag}_w")
        runs.append(run)
    (first, seconds, peak, loop), (second, *_) = runs
    tests = [r.metrics.get("test", {}) if r.status == "ok" else {} for r in (first, second)]
    failed = next((r for r in (first, second) if r.status != "ok"), None)
    status = "ok" if failed is None else failed.status
    if status == "ok" and args.accelerator == "gpu" and not peak > 0:
        status, reason = "failed", "no GPU memory allocated: the run did not reach the GPU"
    else:
        reason = None if failed is None else str(failed.reason).splitlines()[0][:300]
    repeatable = same_metrics(*tests)
    if status == "ok" and mode == "true" and not repeatable:
        status, reason = "failed", f"deterministic runs differ: {tests[0]} vs {tests[1]}"
    return {
        "case": what,
        "overrides": overrides,
        "status": status,
        "reason": reason,
        "deterministic": mode,
        "repeatable": repeatable,
        "loop": loop,
        "test": tests[0],
        "wall_s": round(seconds, 2),
        "gpu_peak_mb": round(peak, 1),
    }


def failed_case(what: str, overrides: list[str], err: Exception) -> dict:
    """A case that stopped before it had a record (a config that does not compose...)."""
    return {
        "case": what,
        "overrides": overrides,
        "status": "failed",
        "reason": f"{type(err).__name__}: {err}".splitlines()[0][:300],
        "deterministic": "-",
        "repeatable": None,
        "loop": None,
        "test": {},
        "wall_s": math.nan,
        "gpu_peak_mb": math.nan,
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
        sys.executable, str(ROOT / "train.py"), "-m", *POOL_SWEEP,
        f"trainer.accelerator={args.accelerator}", f"trainer.max_epochs={args.epochs}",
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
    reason = None
    if not ok:
        errors = [line for line in done.stderr.splitlines() if "Error" in line]
        reason = failed[0] if failed else (errors or [f"{len(records)} of 4 records"])[-1]
    return {
        "case": "pool sweep (fork)",
        "overrides": POOL_SWEEP,
        "status": "ok" if ok else "failed",
        "reason": None if reason is None else str(reason).splitlines()[0][:300],
        "stderr_tail": None if ok else done.stderr[-3000:],
        "deterministic": "true",
        "repeatable": None,
        "loop": "lightning",  # a GPU run, or +trainer.benchmark on the CPU
        "test": {},
        "wall_s": round(time.perf_counter() - start, 2),
        "gpu_peak_mb": math.nan,
    }


def chosen_cases(only: str | None, parser: argparse.ArgumentParser) -> list[int]:
    """Case numbers from ``--only`` (the pool sweep is number ``len(CASES)``)."""
    last = len(CASES)
    if only is None:
        return list(range(last + 1))
    try:
        picked = [int(part) for part in only.split(",")]
    except ValueError:
        parser.error(f"--only takes case numbers 0-{last} separated by commas, got {only!r}")
    wrong = [i for i in picked if not 0 <= i <= last]
    if wrong:
        parser.error(f"--only: no case {wrong[0]}; the cases are 0-{last}")
    return picked


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirror", required=True, help="raw-data mirror, e.g. ../shared/data")
    parser.add_argument("--accelerator", default="gpu", choices=["gpu", "cpu"])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--only", default=None, help=f"case numbers 0-{len(CASES)}, e.g. 0,13")
    parser.add_argument("--out", default=None, help="folder for gpu_check.json (after each case)")
    args = parser.parse_args()
    if args.accelerator == "gpu" and not torch.cuda.is_available():
        parser.error(
            "--accelerator gpu: torch sees no CUDA GPU here (--accelerator cpu checks the plumbing)"
        )
    if args.epochs < 1:
        parser.error(f"--epochs must be >= 1, got {args.epochs}")
    if not Path(args.mirror).is_dir():
        parser.error(f"--mirror {args.mirror}: no such folder")
    chosen = chosen_cases(args.only, parser)
    device = torch.cuda.get_device_name() if args.accelerator == "gpu" else "cpu"
    print(f"torch {torch.__version__}, {device}, {args.epochs} epochs per run", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        for i in chosen:
            if i == len(CASES):
                r = check_pool_sweep(args, Path(tmp))
            else:
                what, overrides = CASES[i]
                try:
                    r = check_case(what, overrides, args, Path(tmp))
                except Exception as err:  # noqa: BLE001 - reported, the other cases run on
                    r = failed_case(what, overrides, err)
            results.append(r)
            show(i, r)
            if args.out:
                write_summary(Path(args.out), device, results)
    failed = [r["case"] for r in results if r["status"] != "ok"]
    print(f"{len(results) - len(failed)} of {len(results)} cases ran", flush=True)
    sys.exit(1 if failed else 0)


def write_summary(out: Path, device: str, results: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    summary = {"torch": torch.__version__, "device": device, "cases": results}
    (out / "gpu_check.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
