"""benchmarks/gpu_check.py on the CPU: its cases compose, train through Lightning's loop
(the one a GPU run takes) and report; benchmarks/child_tree.py keeps PYTHONPATH."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_gpu_check_runs_its_cases_through_lightning_on_the_cpu(mirror, tmp_path):
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "gpu_check.py"), "--mirror", str(mirror),
         "--accelerator", "cpu", "--epochs", "1", "--only", "0,13", "--out", str(tmp_path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    cases = json.loads((tmp_path / "gpu_check.json").read_text())["cases"]
    assert [c["case"] for c in cases] == ["node_cls", "ml_graph_cls"]
    for case in cases:
        assert case["status"] == "ok" and case["repeatable"] and case["deterministic"] == "true"
        assert case["loop"] == "lightning"  # the loop a GPU run takes, not the lean one
        assert case["test"]  # a test metric was recorded
    assert "2 of 2 cases ran" in out.stdout


def test_gpu_check_names_a_case_number_that_does_not_exist(mirror):
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "gpu_check.py"), "--mirror", str(mirror),
         "--accelerator", "cpu", "--only", "3,99"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and "no case 99; the cases are 0-14" in out.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_gpu_check_refuses_gpu_where_torch_sees_none(mirror):
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "gpu_check.py"), "--mirror", str(mirror)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and "torch sees no CUDA GPU" in out.stderr


def test_a_child_tree_keeps_the_folders_already_on_pythonpath(tmp_path, monkeypatch):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from child_tree import run_in_tree
    finally:
        sys.path.remove(str(BENCHMARKS))
    script = tmp_path / "show_path.py"
    script.write_text("import json, os; print(json.dumps(os.environ['PYTHONPATH']))\n")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/site")
    shown = run_in_tree(str(script), [], str(tmp_path / "src"))
    assert shown.split(os.pathsep) == [str(tmp_path / "src"), "/somewhere/site"]


class FakeCudaMemory:
    """torch.cuda's allocation counters: ``reset_peak_memory_stats`` sets the peak to what
    is allocated now, as torch's does."""

    def __init__(self, allocated: int) -> None:
        self.allocated = self.peak = allocated

    def reset_peak_memory_stats(self) -> None:
        self.peak = self.allocated

    def memory_allocated(self) -> int:
        return self.allocated

    def max_memory_allocated(self) -> int:
        return self.peak

    def allocate(self, size: int) -> None:
        self.allocated += size
        self.peak = max(self.peak, self.allocated)


@pytest.mark.parametrize("run_allocates_mb, expected", [(0, 0.0), (100, 100.0)])
def test_the_gpu_peak_leaves_out_what_earlier_cases_left_allocated(
    monkeypatch, run_allocates_mb, expected
):
    """512 MB left by earlier cases: a run that allocates nothing peaks at 0 MB (so the
    case fails as never reaching the GPU), one that holds 100 MB more at 100 MB."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(BENCHMARKS))
    cuda = FakeCudaMemory(allocated=512 * 2**20)
    for name in ("reset_peak_memory_stats", "memory_allocated", "max_memory_allocated"):
        monkeypatch.setattr(gpu_check.torch.cuda, name, getattr(cuda, name))

    def run():
        cuda.allocate(run_allocates_mb * 2**20)
        cuda.allocate(-run_allocates_mb * 2**20)  # freed before the run ends
        return "record"

    assert gpu_check.gpu_peak_mb(run, gpu=True) == ("record", expected)
