"""One process at a time prepares the datasets of a data directory (stages, processes).

torch_geometric writes its ``processed/`` files in place; two processes preparing the same
dataset at once (two joblib workers of a sweep, two sweeps) could read each other's
half-written file. :func:`preparing` holds a file lock, ``<data_dir>/.graphnetz.lock``
(``filelock``: ``flock`` where the file system has it, a lock file otherwise), while a
dataset is staged and processed; the next process waits, then finds the dataset ready.
A lock held by a process that dies is released with it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_NAME = ".graphnetz.lock"
#: Seconds to wait quietly before saying that another process holds the lock.
QUIET_WAIT_S = 2.0
log = logging.getLogger("graphnetz")


@contextmanager
def preparing(data_dir: str | Path, dataset: str) -> Iterator[None]:
    """Hold ``data_dir``'s preparation lock for the body (``dataset`` names it in logs)."""
    folder = Path(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(folder / LOCK_NAME, is_singleton=True)  # re-entrant within a process
    try:
        lock.acquire(timeout=QUIET_WAIT_S)
    except Timeout:
        log.info("%s: waiting for another process preparing data in %s", dataset, folder)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()
