"""Run the reference package itself (``graphnetz==0.2.0``) on a task of the mirror.

A published cell is one draw: the reference's mean over its seeds 0-9. Where ours differs
from it, this tells chance from a difference of implementation or data: the reference's
own ``run_benchmark`` is run here, on the graph our loader reads from the mirror, for as
many seeds as asked. Its seeds 0-9 give back the published value when the graph is the
one it was published on (so the run is the published computation, on this machine);
more seeds say where its mean really lies. Node classification (Cora, CiteSeer) runs on
the mirror's raw Planetoid files through the reference's own loader.

The graph is read by our loader (``conf/dataset/<name>.yaml``) and handed to the
reference's Netzschleuder class as the ``edges.csv`` it would download (each undirected
pair once, node ids as ours), so both sides train on the same edges; the reference keeps
the epochs of its own task registry. Results go to a JSON file, one cell (dataset x
model) at a time, so an interrupted run resumes with the cells it has; nothing finished
is overwritten: a cell with ``--seeds`` seeds or more is skipped, and one with fewer
gets only its missing seeds run and appended (the reference reseeds everything before
each seed, so seed s gives the same value whichever seeds run with it; a cell whose
graph, epochs or metric are no longer those its seeds ran with is refused). Each cell
keeps its metric; the file's ``about.commands`` gets, as each cell finishes, this run's
command restricted to the cells it has written (one command per dataset), so it never
lists a cell that is not there.

    python benchmarks/reference_package_runs.py --peer-venv /tmp/peer --mirror ../shared/data \\
        --datasets euroroad,board_directors --models gcn,sage,gat,gt --seeds 40 \\
        --out benchmarks/reproduce/reference_package_runs.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from sweep_speed import PEER_NAMES, peer_problem, run_peer_driver  # noqa: E402

#: The encoders the reference runs on node and link tasks (GIN is graph-level only).
MODELS = ("gcn", "sage", "gat", "gt")

#: Node classification tasks, read by the reference's own Planetoid loader.
PLANETOID = {"cora": "Cora", "citeseer": "CiteSeer"}

PEER_DRIVER = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
from graphnetz import models as M
from graphnetz.benchmark import BENCHMARK_TASKS, Task, run_benchmark
from graphnetz.datasets._netz import Netz
from torch_geometric.datasets import Planetoid
root, name, task_type, model, first, seeds = json.loads(sys.argv[1])
registered = [t for per_type in BENCHMARK_TASKS.values() for tasks in per_type.values()
              for t in tasks if t.name == name and t.task_type == task_type]
if not registered:
    raise SystemExit(f"the reference registers no {task_type} task {name!r}")
epochs = registered[0].epochs
if task_type == "link_pred":
    load = lambda: Netz(root=root, dataset_name=name, network_name=name)
    metric = "test_auc"
else:  # its own Planetoid loader, on the mirror's raw files staged under root
    load = lambda: Planetoid(root, {"cora": "Cora", "citeseer": "CiteSeer"}[name])
    metric = "test_acc"
task = Task(name, task_type, lambda _: load(), epochs=epochs)
start = time.perf_counter()
report = run_benchmark(tasks=[task], models={model: getattr(M, model)}, root=root,
                       seeds=list(range(first, seeds)), verbose=False, device="cpu")
data = load()[0]
print(json.dumps({
    "values": [h[metric][-1] for h in report.histories[name][model]],
    "metric": metric, "epochs": epochs, "wall_s": time.perf_counter() - start,
    "nodes": int(data.num_nodes), "edges": int(data.edge_index.size(1) // 2),
}))
"""


def our_graph(dataset: str, mirror: str, data_dir: str) -> tuple[list[tuple[int, int]], int, str]:
    """(undirected pairs, node count, source) of ``dataset`` as our loader reads it."""
    sys.path.insert(0, str(ROOT / "src"))
    from hydra import compose, initialize_config_dir

    from graphnetz.config_dir import CONF_DIR
    from graphnetz.data.loading import load_dataset

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[f"dataset={dataset}"])
    data = load_dataset(cfg.dataset.loader, data_dir, mirror)
    data = data[0] if not hasattr(data, "edge_index") else data
    pairs = sorted({(min(a, b), max(a, b)) for a, b in data.edge_index.t().tolist()})
    return pairs, int(data.num_nodes), str(getattr(data, "source", dataset))


def stage(root: Path, name: str, pairs: list[tuple[int, int]]) -> None:
    """The ``data.csv.zip`` the reference's Netzschleuder class would download."""
    raw = root / name / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{a},{b}\n" for a, b in pairs)
    with zipfile.ZipFile(raw / "data.csv.zip", "w") as archive:
        archive.writestr("edges.csv", "# source, target\n" + rows)


def stage_planetoid(root: Path, name: str, mirror: str) -> None:
    """The mirror's raw Planetoid files where the reference's Planetoid(root) reads them."""
    folder = PLANETOID[name]
    shutil.copytree(Path(mirror) / "Planetoid" / folder / "raw", root / folder / "raw")


def written_command(args: argparse.Namespace, dataset: str, models: list[str]) -> str:
    """This run's command line restricted to one dataset and the models it has written."""
    parts = [
        "python",
        sys.argv[0],
        f"--peer-venv {args.peer_venv} --mirror {args.mirror} --datasets {dataset}",
        f"--models {','.join(models)} --seeds {args.seeds} --out {args.out}",
    ]
    return " ".join(parts)


def record_command(about: dict, previous: str | None, command: str) -> None:
    """Put ``command`` in ``about['commands']`` in place of ``previous`` (this run's
    earlier command for the same dataset), or after the others."""
    commands = about.setdefault("commands", [])
    if previous in commands:
        commands[commands.index(previous)] = command
    elif command not in commands:
        commands.append(command)


def run_cell(python: Path, root: Path, name: str, model: str, seeds: range) -> dict:
    """The reference's values of ``model`` on ``name`` for ``seeds`` (consecutive)."""
    task_type = "node_cls" if name in PLANETOID else "link_pred"
    payload = [str(root), name, task_type, model, seeds.start, seeds.stop]
    return run_peer_driver(python, PEER_DRIVER, payload, f"the reference on {name} / {model}")


def extend_cell(key: str, cell: dict, more: dict) -> dict:
    """``cell`` (seeds 0..n-1) with the values of ``more`` (seeds n..) appended and both
    runs' times added; refused where the graph (node and edge counts), the epochs or the
    metric differ (a cell written before cells kept their metric has test AUC)."""
    cell = {"metric": "test_auc", **cell}
    for field in ("metric", "epochs", "nodes", "edges", "our_nodes", "our_edges"):
        if cell.get(field) != more.get(field):
            raise SystemExit(
                f"{key}: its {len(cell['values'])} finished seeds ran with {field} "
                f"{cell.get(field)!r}, the missing ones would run with {more.get(field)!r}; "
                "remove the cell from the file to run all its seeds again"
            )
    return {
        **cell,
        "values": cell["values"] + more["values"],
        "wall_s": cell["wall_s"] + more["wall_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--peer-venv", required=True, help="venv with graphnetz==0.2.0")
    parser.add_argument("--mirror", default=os.environ.get("GRAPHNETZ_DATA_MIRROR"))
    parser.add_argument("--datasets", default="euroroad")
    parser.add_argument("--models", default="gcn,sage,gat,gt")
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--out", default=str(HERE / "reproduce" / "reference_package_runs.json"))
    args = parser.parse_args()
    if not args.mirror:
        raise SystemExit("--mirror (or $GRAPHNETZ_DATA_MIRROR) is required")
    unknown = sorted(set(args.models.split(",")) - set(MODELS))
    if unknown:
        raise SystemExit(f"unknown model(s) {unknown}; valid: {list(MODELS)}")
    problem = peer_problem(args.peer_venv)
    if problem:
        raise SystemExit(f"--peer-venv: {problem}")
    python = Path(args.peer_venv) / "bin" / "python"
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    about = results.setdefault(
        "about",
        {
            "reference": "graphnetz==0.2.0 run_benchmark, final-epoch test metric per seed "
            "(each cell's 'metric')",
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, one torch thread",
        },
    )
    cells = results.setdefault("cells", {})
    data_dir = tempfile.mkdtemp(prefix="reference-data-")
    for dataset in args.datasets.split(","):
        root = Path(tempfile.mkdtemp(prefix=f"reference-{dataset}-"))
        if dataset in PLANETOID:
            stage_planetoid(root, dataset, args.mirror)
            task_type, ours = (
                "node_cls",
                {"source": f"{args.mirror}/Planetoid/{PLANETOID[dataset]}"},
            )
        else:
            pairs, nodes, source = our_graph(dataset, args.mirror, data_dir)
            stage(root, dataset, pairs)
            task_type, ours = (
                "link_pred",
                {"source": source, "our_nodes": nodes, "our_edges": len(pairs)},
            )
        written: list[str] = []  # this run's finished models of the dataset
        command = None
        for model in args.models.split(","):
            key = f"{dataset}/{task_type}/{model}"
            have = len(cells[key]["values"]) if key in cells else 0
            if have >= args.seeds:
                print(f"{key}: already measured ({have} seeds)")
                continue
            start = time.perf_counter()
            cell = run_cell(python, root, dataset, PEER_NAMES[model], range(have, args.seeds))
            cell.setdefault("metric", "test_auc" if task_type == "link_pred" else "test_acc")
            cell.update(ours)
            if have:
                print(f"{key}: {have} seeds kept, seeds {have}-{args.seeds - 1} run now")
                cell = extend_cell(key, cells[key], cell)
            cells[key] = cell
            written.append(model)
            previous, command = command, written_command(args, dataset, written)
            record_command(about, previous, command)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(results, indent=1) + "\n")
            os.replace(tmp, out)
            values = cell["values"]
            print(
                f"{key}: {len(values)} seeds, mean {sum(values) / len(values):.4f} (seeds 0-9: "
                f"{sum(values[:10]) / len(values[:10]):.4f}), {time.perf_counter() - start:.0f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
