"""Sweep cost against the reference package: Cora (GCN, GAT, SAGE, GT x 10 seeds x 100
epochs, the reference protocol) and MUTAG (GCN, GAT, SAGE, GT, GIN x 10 seeds x 40 epochs).

Both sides run as a user runs them, each in its own process, timed from start to end
(imports and dataset loading included): ours is ``train.py -m`` (one sweep per dataset);
the reference is ``graphnetz.benchmark.run_benchmark`` of ``graphnetz==0.2.0``, installed
in a separate virtual environment (``--peer-venv``), which reads the same mirror: its
loaders take a root folder, so the raw files are staged there first (PyG then processes
them without downloading). Every job uses one torch thread, but ours runs on the
launcher's workers (the pool's default: one per core) while the reference runs its jobs
one after another in one process: so the wall-time ratio includes our parallelism, and
the CPU-time ratio (user + system seconds of each side's processes) does not. Printed
per dataset: wall and CPU time and both ratios, time per epoch (wall / runs / epochs)
beside the arithmetic floor of one epoch (``benchmarks/flops.py``, Cora on the CPU only:
FLOPs / measured one-thread dense GEMM rate), and per model its mean test accuracy with
its 95 % t-interval (and whether the reference's mean lies inside it) and its seconds per
run on both sides (the reference's models are timed one after another in its process).

The reference's GAT and GraphTransformer give every head the full hidden width (8 x 64
and 4 x 64, concatenated) where ours split ``model.hidden_channels`` over the heads, so
their per-run ratios compare models of different sizes. Unless ``--no-reference-width``,
our GAT and GT cells are run again with ``+model.head_channels=64`` (the reference's
widths) and their seconds per run printed beside the reference's: the like-for-like ratio.

    python benchmarks/sweep_speed.py --peer-venv /tmp/peer --mirror ../shared/data
    python benchmarks/sweep_speed.py --quick ...      # 2 seeds, 20 / 10 epochs
    python benchmarks/sweep_speed.py --accelerator gpu ...

Without ``--peer-venv`` (or if it lacks graphnetz 0.2.0) only our side runs, with a message.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scipy import stats as scipy_stats

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SWEEPS = {
    "cora": {"models": ["gcn", "gat", "sage", "gt"], "epochs": 100, "metric": "accuracy"},
    "mutag": {"models": ["gcn", "gat", "sage", "gt", "gin"], "epochs": 40, "metric": "accuracy"},
}
PEER_NAMES = {"gcn": "GCN", "gat": "GAT", "sage": "GraphSAGE", "gt": "GraphTransformer"}
PEER_NAMES["gin"] = "GIN"
#: The reference's models whose heads each get the full hidden width (label printed).
REFERENCE_WIDE = {"gat": "gat 8x64", "gt": "gt 4x64"}

PEER_DRIVER = r"""
import json, shutil, sys, time
start = time.perf_counter()
import torch
torch.set_num_threads(1)
from graphnetz.benchmark import Task, run_benchmark
from graphnetz import models as M
from torch_geometric.datasets import Planetoid, TUDataset
mirror, root, dataset, seeds, epochs, device, names = json.loads(sys.argv[1])
def cora(r):
    shutil.copytree(f"{mirror}/Planetoid/Cora/raw", f"{r}/Cora/raw", dirs_exist_ok=True)
    return Planetoid(r, "Cora")
def mutag(r):
    shutil.copytree(f"{mirror}/TUDataset/MUTAG/raw", f"{r}/MUTAG/raw", dirs_exist_ok=True)
    return TUDataset(r, "MUTAG")
task_type = "node_cls" if dataset == "cora" else "graph_cls"
task = Task(dataset, task_type, {"cora": cora, "mutag": mutag}[dataset], epochs=epochs)
acc, model_s = {}, {}
for n in names:  # one model at a time, to time each (the seeds are the same)
    began = time.perf_counter()
    report = run_benchmark(
        tasks=[task], models={n: getattr(M, n)}, root=root,
        seeds=list(range(seeds)), verbose=False, device=device,
    )
    model_s[n] = time.perf_counter() - began
    acc[n] = [h["test_acc"][-1] for h in report.histories[dataset][n]]
print(json.dumps({"wall_s": time.perf_counter() - start, "test": acc, "model_s": model_s}))
"""


def half_width(values: list[float]) -> float:
    """Half the width of the 95 % t-interval of the mean of ``values`` (2 or more)."""
    spread = scipy_stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values)
    return spread / math.sqrt(len(values))


def t_interval(values: list[float]) -> str:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {half_width(values):.3f}"


def children_cpu_s() -> float:
    """User + system seconds of the finished (waited-for) child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_ours(
    dataset: str, args, seeds: int, epochs: int, models=None, extra: tuple[str, ...] = ()
) -> dict:
    spec = SWEEPS[dataset]
    models = list(models or spec["models"])
    sweep_dir = Path(tempfile.mkdtemp(prefix=f"sweep-{dataset}-"))
    cmd = [sys.executable, str(ROOT / "train.py"), "-m", f"model={','.join(models)}"]
    cmd += [f"dataset={dataset}", f"seed=range({seeds})", f"trainer.max_epochs={epochs}"]
    cmd += ["num_threads=1", f"trainer.accelerator={args.accelerator}"]
    cmd += [f"paths.data_mirror={args.mirror}", f"hydra.sweep.dir={sweep_dir}"]
    cmd += [f"paths.output_dir={sweep_dir}/out", f"paths.data_dir={args.data_dir}"]
    cmd += [*args.launcher_overrides, *extra]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), OMP_NUM_THREADS="1")
    cpu, start = children_cpu_s(), time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - start, children_cpu_s() - cpu
    if out.returncode:
        raise SystemExit(f"our sweep failed:\n{out.stderr[-3000:]}")
    test: dict[str, list[float]] = {m: [] for m in models}
    run_s, model_s = [], dict.fromkeys(models, 0.0)
    records = sorted(sweep_dir.glob("*/result.json"))
    if len(records) != seeds * len(models):
        raise SystemExit(f"{sweep_dir}: {len(records)} records for {seeds * len(models)} runs")
    for path in records:
        record = json.loads(path.read_text())
        if record["status"] != "ok":
            raise SystemExit(f"{path}: {record['status']} ({record.get('reason')})")
        test[record["model"]].append(record["metrics"]["test"][spec["metric"]])
        run_s.append(record["wall_time_s"])  # a stacked seed's: its share of the stack's
        model_s[record["model"]] += record["wall_time_s"]
    return {"wall_s": wall, "cpu_s": cpu, "test": test, "run_s": run_s, "model_s": model_s}


def run_peer(dataset: str, args, seeds: int, epochs: int) -> dict:
    python = Path(args.peer_venv) / "bin" / "python"
    names = [PEER_NAMES[m] for m in SWEEPS[dataset]["models"]]
    device = "cuda" if args.accelerator == "gpu" else "cpu"
    payload = [str(Path(args.mirror).resolve()), tempfile.mkdtemp(prefix="peer-")]
    payload += [dataset, seeds, epochs, device, names]
    cpu, start = children_cpu_s(), time.perf_counter()
    result = run_peer_driver(python, PEER_DRIVER, payload, "reference sweep")
    wall, cpu = time.perf_counter() - start, children_cpu_s() - cpu
    models = SWEEPS[dataset]["models"]
    by_ours = {m: result["test"][PEER_NAMES[m]] for m in models}
    model_s = {m: result["model_s"][PEER_NAMES[m]] for m in models}
    return {"wall_s": wall, "cpu_s": cpu, "test": by_ours, "model_s": model_s}


def run_peer_driver(python: Path, driver: str, payload, what: str) -> dict:
    """Run ``driver`` with the reference venv's ``python`` (one thread, none of our paths)
    on the JSON ``payload``; the JSON its last output line prints."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    out = subprocess.run(
        [str(python), "-c", driver, json.dumps(payload)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tempfile.mkdtemp(prefix="peer-cwd-"),  # `-c` puts the cwd first on sys.path
    )
    if out.returncode:
        raise SystemExit(f"{what} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def peer_problem(venv: str | None) -> str | None:
    """Why the reference side cannot run, or None."""
    if not venv:
        return "no --peer-venv given"
    python = Path(venv) / "bin" / "python"
    if not python.exists():
        return f"{python} does not exist"
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('graphnetz'))"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tempfile.gettempdir(),
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    version = probe.stdout.strip()
    if probe.returncode or version != "0.2.0":
        return f"{venv} has graphnetz {version or 'missing'}, not 0.2.0"
    return None


def cora_floor_ms(rate: float) -> dict[str, float]:
    """The arithmetic floor of one Cora epoch per model, in ms."""
    sys.path.insert(0, str(HERE))
    from flops import epoch_flops

    nodes, edges, words, nnz, classes = 2708, 10556, 1433, 49216, 7
    return {
        m: 1e3 * epoch_flops(m, nodes, edges, nnz, [words, 64, classes]) / rate
        for m in SWEEPS["cora"]["models"]
    }


def model_line(model: str, ours, peer, seeds: int, floor: float | None, label="") -> str:
    """One model's accuracies, seconds per run on both sides and their ratio."""
    values = ours["test"][model]
    line = f"  {(label or model):5s} test acc ours {t_interval(values):15s}"
    if peer:
        line += f" reference {t_interval(peer['test'][model]):15s}"
        line += " inside " if inside(values, statistics.fmean(peer["test"][model])) else " OUTSIDE"
    line += f" s/run ours {ours['model_s'][model] / seeds:5.2f}"
    if peer:
        ratio = peer["model_s"][model] / ours["model_s"][model]
        line += f" reference {peer['model_s'][model] / seeds:5.2f} ({ratio:.2f}x)"
    if floor is not None:
        line += f" floor {floor:.2f} ms/epoch"
    return line


def inside(values: list[float], mean: float) -> bool:
    """Whether ``mean`` lies in the 95 % t-interval of ``values``."""
    return len(values) >= 2 and abs(mean - statistics.fmean(values)) <= half_width(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--peer-venv", default=None, help="venv with graphnetz==0.2.0")
    parser.add_argument("--mirror", default=os.environ.get("GRAPHNETZ_DATA_MIRROR"))
    parser.add_argument(
        "--data-dir",
        default=None,
        help="our side's data dir (default: a new temporary folder, so ours processes the "
        "raw files as the reference does; an already processed folder starts ours warm)",
    )
    parser.add_argument("--datasets", default="cora,mutag")
    parser.add_argument("--quick", action="store_true", help="2 seeds, 20 (Cora) / 10 epochs")
    parser.add_argument("--seeds", type=int, default=None, help="default 10 (2 with --quick)")
    parser.add_argument("--epochs", type=int, default=None, help="override both datasets")
    parser.add_argument("--accelerator", default="cpu", choices=["cpu", "gpu"])
    parser.add_argument(
        "--launcher",
        default="pool",
        choices=["pool", "basic", "joblib"],
        help="our sweep's launcher: pool (the default: forked workers, one per core), basic "
        "(every job in one process), joblib (n_jobs = CPU count); one thread per job",
    )
    parser.add_argument(
        "--no-reference-width",
        action="store_true",
        help="skip the second run of our GAT and GT at the reference's head widths",
    )
    args = parser.parse_args()
    args.data_dir = args.data_dir or tempfile.mkdtemp(prefix="sweep-data-")
    if not args.mirror:
        raise SystemExit("--mirror (or $GRAPHNETZ_DATA_MIRROR) is required")
    args.launcher_overrides = {
        "pool": [],
        "basic": ["hydra/launcher=basic"],
        "joblib": ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={os.cpu_count()}"],
    }[args.launcher]
    seeds = args.seeds or (2 if args.quick else 10)
    problem = peer_problem(args.peer_venv)
    if problem:
        print(f"reference comparison skipped: {problem}")
    sys.path.insert(0, str(HERE))
    import torch
    from flops import gemm_rate

    torch.set_num_threads(1)
    rate = gemm_rate()
    for dataset in args.datasets.split(","):
        epochs = args.epochs or (
            {"cora": 20, "mutag": 10}[dataset] if args.quick else SWEEPS[dataset]["epochs"]
        )
        runs = seeds * len(SWEEPS[dataset]["models"])
        ours = run_ours(dataset, args, seeds, epochs)
        print(f"\n{dataset}: {runs} runs x {epochs} epochs, {args.accelerator}")
        print(
            f"  ours      {ours['wall_s']:8.1f} s  ({1e3 * ours['wall_s'] / runs / epochs:.1f} "
            f"ms per epoch; median run {statistics.median(ours['run_s']):.2f} s); "
            f"CPU {ours['cpu_s']:.1f} s"
        )
        peer = None
        if not problem:
            peer = run_peer(dataset, args, seeds, epochs)
            print(
                f"  reference {peer['wall_s']:8.1f} s  "
                f"({1e3 * peer['wall_s'] / runs / epochs:.1f} ms per epoch); "
                f"CPU {peer['cpu_s']:.1f} s"
            )
            print(
                f"  ratio reference / ours: wall {peer['wall_s'] / ours['wall_s']:.2f}x, "
                f"CPU {peer['cpu_s'] / ours['cpu_s']:.2f}x"
            )
        floors = cora_floor_ms(rate) if dataset == "cora" and args.accelerator == "cpu" else {}
        for model in SWEEPS[dataset]["models"]:
            print(model_line(model, ours, peer, seeds, floors.get(model)))
        wide = [m for m in REFERENCE_WIDE if m in SWEEPS[dataset]["models"]]
        if wide and not args.no_reference_width:
            extra = ("+model.head_channels=64",)
            same_width = run_ours(dataset, args, seeds, epochs, wide, extra)
            print(f"  at the reference's widths ({', '.join(extra)}):")
            for model in wide:
                print(model_line(model, same_width, peer, seeds, None, REFERENCE_WIDE[model]))
    if args.accelerator == "cpu":
        print(f"\n(floor: FLOPs of forward + backward + evaluation at {rate / 1e9:.1f} GFLOP/s)")
    print(
        "(s/run: ours from the records, a stacked seed's share of its stack, the runs of the "
        "workers side by side; the reference's models timed one after another in its process;"
        " 'inside': the reference's mean lies in our 95 % interval)"
    )


if __name__ == "__main__":
    main()
