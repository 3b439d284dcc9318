"""Atomic file writes: write to a temporary file in the same folder, then ``os.replace``.

Every temporary file has a name of its own (the writer's host and process id plus a random
part, created exclusively), so two processes writing the same file never touch each
other's temporary file; the last rename wins and readers only ever see a whole file.
Temporary files are created with mode ``0o666`` less the umask, like ``open()``, so the
file keeps the permissions the user's umask asks for (0644 under umask 022) after the
rename; ``tempfile.mkstemp`` would make it 0600 whatever the umask.
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

_TEMP_TAG = ".tmp-"
_TEMP_PATTERN = re.compile(r"\.tmp-(?P<pid>\d+)@(?P<host>.+)-[0-9a-f]{8}$")


def create_temp(path: str | Path) -> tuple[int, Path]:
    """Create (exclusively) and open a fresh temporary file beside ``path``.

    Returns the open file descriptor and the temporary path,
    ``.<name>.tmp-<pid>@<host>-<random>``; the caller writes it and renames it to ``path``.
    """
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.with_name(
            f".{path.name}{_TEMP_TAG}{os.getpid()}@{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        )
        try:
            return os.open(tmp, flags, 0o666), tmp  # the kernel applies the umask
        except FileExistsError:  # pragma: no cover - 32 random bits collided
            continue


def temp_files_of(path: str | Path) -> list[Path]:
    """The temporary files beside ``path`` that :func:`create_temp` made for it."""
    path = Path(path)
    prefix = f".{path.name}{_TEMP_TAG}"
    if not path.parent.is_dir():
        return []
    return [p for p in path.parent.iterdir() if p.name.startswith(prefix)]


def abandoned_temp_files(path: str | Path) -> list[Path]:
    """Temporary files for ``path`` whose writer was a process of this host that has ended
    (killed mid-write); those of live processes, or of other hosts, are left alone."""
    host = socket.gethostname()
    abandoned = []
    for tmp in temp_files_of(path):
        match = _TEMP_PATTERN.search(tmp.name)
        if match and match["host"] == host and not _process_alive(int(match["pid"])):
            abandoned.append(tmp)
    return abandoned


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def write_atomic(path: str | Path, write: Callable[[IO], None], mode: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_temp(path)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if "b" not in mode else {})) as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    return write_atomic(path, lambda fh: fh.write(text), "w")


#: Resolution of saved raster figures (dots per inch).
FIGURE_DPI = 200


def save_figure(fig, path: str | Path, bbox_inches="tight") -> Path:
    """Atomically save a matplotlib figure; the format comes from the path's suffix.

    ``bbox_inches``: the crop box, ``"tight"`` by default; a figure saved in several
    formats can pass :func:`tight_bbox`'s box, computed once."""
    fmt = Path(path).suffix.lstrip(".")
    # a PDF otherwise carries its creation time: the same report would differ byte by byte
    meta = {"CreationDate": None} if fmt == "pdf" else None

    def save(fh) -> None:
        fig.savefig(fh, format=fmt, bbox_inches=bbox_inches, dpi=FIGURE_DPI, metadata=meta)

    return write_atomic(path, save, "wb")


def tight_bbox(fig):
    """The crop box ``bbox_inches="tight"`` gives at :data:`FIGURE_DPI`, or ``"tight"``
    itself for a figure whose layout engine still runs at draw time (constrained layout).

    Computed once, it saves each format its own search for the box (a PNG with it is
    pixel for pixel the ``"tight"`` one; a PDF's box may differ by a fraction of a point).
    """
    from matplotlib import rcParams
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
        return "tight"
    dpi = fig.dpi
    fig.set_dpi(FIGURE_DPI)  # text extents at the resolution the files are drawn at
    try:
        box = fig.get_tightbbox(fig.canvas.get_renderer())
    finally:
        fig.set_dpi(dpi)
    return box.padded(rcParams["savefig.pad_inches"])
