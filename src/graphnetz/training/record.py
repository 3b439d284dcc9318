"""Run records: one self-describing ``result.json`` per run, written atomically."""

from __future__ import annotations

import json
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
RECORD_NAME = "result.json"
STATUSES = ("ok", "skipped", "failed")
_PACKAGES = ("graphnetz", "torch", "torch_geometric", "lightning", "torchmetrics", "hydra-core",
             "omegaconf", "numpy", "scipy", "gensim")


def library_versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def write_json_atomic(path: str | os.PathLike, payload: Any) -> Path:
    """Write JSON to a temp file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(payload, handle, indent=2, default=_jsonable, allow_nan=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
