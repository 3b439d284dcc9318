"""Run records: one self-describing ``result.json`` per run, written atomically."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from graphnetz.atomic import write_text

SCHEMA_VERSION = 1
RECORD_NAME = "result.json"
STATUSES = ("ok", "skipped", "failed")
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
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["graphnetz_revision"] = SOURCE_REVISION
    return versions


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


def write_json_atomic(path: str | os.PathLike, payload: Any) -> Path:
    """Write JSON via a temp file + rename: readers never see half a record."""
    text = json.dumps(payload, indent=2, default=_jsonable, allow_nan=True)
    return write_text(path, text)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    return str(value)


def read_record(path: str | os.PathLike) -> dict:
    with open(path) as handle:
        record = json.load(handle)
    if not isinstance(record, dict) or record.get("status") not in STATUSES:
        raise ValueError(f"{path} is not a GraphNetz run record (status must be one of {STATUSES})")
    return record
