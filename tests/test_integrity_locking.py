"""Two processes preparing one dataset: one prepares it, the other waits and reads it whole
(graphnetz.data.locking, taken by graphnetz.data.loading.load_dataset)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CHUNK, CHUNKS = b"processed " * 400, 20

# Run by two processes at once, released together by a barrier of files.
WORKER = """
import json, sys, time
from pathlib import Path
from graphnetz.data.loading import load_dataset
loader, root, mirror, barrier, me = sys.argv[1:]
Path(barrier, me).touch()
while len(list(Path(barrier).iterdir())) < 2:
    time.sleep(0.005)
data = load_dataset(json.loads(loader), root, mirror or None)
print("RESULT", data if isinstance(data, str) else int(data.test_mask.sum()))
"""


def slow_processing_loader(root, mirror=None) -> str:
    """Writes its processed file in place, slowly, as torch_geometric does, or reads it."""
    path = Path(root) / "Slow" / "processed" / "data.bin"
    if path.is_file():
        size = len(path.read_bytes())
        if size != len(CHUNK) * CHUNKS:
            raise RuntimeError(f"read a half-written processed file ({size} bytes)")
        return "read"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for _ in range(CHUNKS):
            fh.write(CHUNK)
            fh.flush()
            time.sleep(0.05)
    return "built"


def prepare_in_two_processes(loader: dict, root: Path, mirror: Path | None, tmp: Path):
    barrier = tmp / "barrier"
    barrier.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
        "OMP_NUM_THREADS": "1",
    }
    args = [json.dumps(loader), str(root), str(mirror or ""), str(barrier)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, *args, name],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("first", "second")
    ]
    outputs = [w.communicate(timeout=300) for w in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
    return sorted(
        line.split()[1]
        for out, _ in outputs
        for line in out.splitlines()
        if line.startswith("RESULT ")
    )


def test_one_process_prepares_a_dataset_while_the_other_waits_for_it(tmp_path):
    loader = {"_target_": "test_integrity_locking.slow_processing_loader"}
    results = prepare_in_two_processes(loader, tmp_path / "data", None, tmp_path)
    assert results == ["built", "read"]


def test_two_processes_preparing_cora_both_get_the_whole_dataset(tmp_path, mirror):
    loader = {"_target_": "graphnetz.data.pyg.load_planetoid", "name": "Cora"}
    results = prepare_in_two_processes(loader, tmp_path / "data", mirror, tmp_path)
    assert results == ["1000", "1000"]


def test_a_loader_that_loads_another_dataset_of_the_same_folder_does_not_deadlock(tmp_path):
    """The lock is re-entrant within a process (a composite loader may call load_dataset)."""
    from graphnetz.data.locking import preparing

    finished = threading.Event()

    def nested():
        with preparing(tmp_path, "outer"), preparing(tmp_path, "inner"):
            finished.set()

    worker = threading.Thread(target=nested, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert finished.is_set()
