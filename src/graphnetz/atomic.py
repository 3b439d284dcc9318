"""Atomic file writes: write to a temporary file in the same folder, then ``os.replace``."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def write_atomic(path: str | Path, write: Callable[[IO], None], mode: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if "b" not in mode else {})) as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    return write_atomic(path, lambda fh: fh.write(text), "w")


def save_figure(fig, path: str | Path) -> Path:
    """Atomically save a matplotlib figure; the format comes from the path's suffix."""
    fmt = Path(path).suffix.lstrip(".")
    return write_atomic(
        path, lambda fh: fig.savefig(fh, format=fmt, bbox_inches="tight", dpi=200), "wb"
    )
