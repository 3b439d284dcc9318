"""Whether this machine has a GPU, asked without spoiling the pool launcher's workers.

``torch.cuda.is_available()`` initialises the CUDA driver in the asking process, and a
process forked after that cannot use CUDA ("Cannot re-initialize CUDA in forked
subprocess"). The launching process asks while it plans a sweep (config checks, which
fit loop, which cells stack) and then forks its workers, which would then fail every GPU
run. With ``PYTORCH_NVML_BASED_CUDA_CHECK=1`` torch answers through NVML instead and
leaves the driver alone; Lightning counts devices the same way.
"""

from __future__ import annotations

import os

import torch

NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"


def cuda_available() -> bool:
    """``torch.cuda.is_available()``, asked through NVML (unless the variable is set)."""
    os.environ.setdefault(NVML_CHECK, "1")
    return torch.cuda.is_available()


def accelerator_available() -> bool:
    """A CUDA GPU or Apple's MPS."""
    return cuda_available() or torch.backends.mps.is_available()
