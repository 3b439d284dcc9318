"""Whether this machine has a GPU, asked without spoiling the pool launcher's workers.

``torch.cuda.is_available()`` initialises the CUDA driver in the asking process, and a
process forked after that cannot use CUDA ("Cannot re-initialize CUDA in forked
subprocess"). The launching process asks while it plans a sweep (config checks, which
fit loop, which cells stack) and then forks its workers, which would then fail every GPU
run. With ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` torch answers through NVML instead and
leaves the driver alone; Lightning counts devices the same way.

Where NVML cannot answer (GPUs named by MIG UUIDs in ``CUDA_VISIBLE_DEVICES``, no NVML
library), torch would fall back to initialising the driver; a short-lived child process
asks instead (once per process, a second or two of imports), so the asking process can
still fork.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import torch

NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
_ASK = "import torch; print(int(torch.cuda.is_available()))"


def cuda_available() -> bool:
    """``torch.cuda.is_available()``, asked without initialising CUDA in this process."""
    os.environ.setdefault(NVML_CHECK, "1")
    if _nvml_cannot_count():
        return _asked_in_a_child()
    return torch.cuda.is_available()


def _nvml_cannot_count() -> bool:
    """Whether torch, asked here, would initialise the CUDA driver to answer."""
    if os.environ[NVML_CHECK] != "1" or not torch.backends.cuda.is_built():
        return False
    if torch.cuda.is_initialized() or torch.version.hip is not None:
        return False  # already initialised (nothing to spoil); ROCm counts its own way
    count_nvml = getattr(torch.cuda, "_device_count_nvml", None)
    return count_nvml is not None and count_nvml() < 0


@functools.cache
def _asked_in_a_child() -> bool:
    env = {k: v for k, v in os.environ.items() if k != NVML_CHECK}
    answer = subprocess.run(
        [sys.executable, "-c", _ASK], env=env, capture_output=True, text=True, timeout=300
    )
    if answer.returncode != 0:
        raise RuntimeError(
            "could not ask a child process whether CUDA is available (NVML cannot count "
            f"the GPUs here): exit {answer.returncode}, {answer.stderr.strip()[-500:]}"
        )
    return answer.stdout.strip().endswith("1")


def accelerator_available() -> bool:
    """A CUDA GPU. Apple's MPS does not count: it has no sparse CSR tensors (the
    adjacency caches, sparse features and sparse products build them) and no float64
    (the multi-label metrics compute in it), so runs stay on the CPU there."""
    return cuda_available()


def run_device_type(trainer_cfg) -> str:
    """``"cuda"`` or ``"cpu"``: where a run with this trainer config trains."""
    accelerator = str(trainer_cfg.get("accelerator", "auto")).lower()
    if accelerator in ("gpu", "cuda") or (accelerator == "auto" and cuda_available()):
        return "cuda"
    return "cpu"
