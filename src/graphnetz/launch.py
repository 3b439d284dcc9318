"""The directory the user launched from: relative paths of a run are taken against it.

A relative ``paths.data_mirror``, ``paths.data_dir``, ``paths.output_dir`` or
``$GRAPHNETZ_DATA_MIRROR`` means "relative to where I started", even when the process has
changed directory since (Hydra's ``job.chdir``, a notebook's ``%cd``, a script's
``os.chdir``); the run record stores the absolute path that was used.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The working directory when graphnetz was first imported.
IMPORT_DIR = Path.cwd()


def launch_dir() -> Path:
    """Hydra's original working directory inside a Hydra job, else :data:`IMPORT_DIR`."""
    from hydra.core.hydra_config import HydraConfig

    if HydraConfig.initialized():
        return Path(HydraConfig.get().runtime.cwd)
    return IMPORT_DIR


def absolute_path(path: str | os.PathLike) -> Path:
    """``path`` with ``~`` expanded, relative to :func:`launch_dir`, normalised."""
    path = Path(path).expanduser()
    return (path if path.is_absolute() else launch_dir() / path).resolve()
