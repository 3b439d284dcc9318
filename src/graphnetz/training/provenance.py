"""Provenance of a run: the library versions and the source revision that produced it."""

from __future__ import annotations

import functools
import platform
import subprocess
from importlib import metadata
from pathlib import Path

_PACKAGES = (
    "graphnetz",
    "torch",
    "torch_geometric",
    "lightning",
    "torchmetrics",
    "hydra-core",
    "omegaconf",
    "numpy",
    "scipy",
    "gensim",
)


def library_versions() -> dict[str, str]:
    """The versions this process runs with (a copy: the record may keep it)."""
    return dict(_versions_at_first_use())


@functools.cache
def _versions_at_first_use() -> dict[str, str]:
    """Read once per process, like :data:`SOURCE_REVISION`: the libraries a process has
    imported do not change when a package is reinstalled under it (reading 10 package
    metadata took 17 ms, a tenth of a Karate run)."""
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["graphnetz_revision"] = SOURCE_REVISION
    versions["cpu_kernels"] = _cpu_kernels()
    return versions


def _cpu_kernels() -> str:
    """The vector instruction set torch's CPU kernels run with (``AVX512``, ``AVX2``,
    ...): the same code and seed give the same metrics with one set, but kernels built
    for another may round a product or a sum differently, so a record says which set
    computed it."""
    import torch

    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except (AttributeError, RuntimeError):
        return "unknown"


def source_revision() -> str:
    """The git commit of the GraphNetz source that ran, ``+dirty`` with uncommitted
    changes, or ``unknown`` outside a git checkout (e.g. a wheel install)."""
    src = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(src), *args], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", str(src.parent))
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


#: Read when the code is imported, not when a record is written: a long sweep whose
#: checkout moves on meanwhile still records the revision it actually runs.
SOURCE_REVISION = source_revision()
