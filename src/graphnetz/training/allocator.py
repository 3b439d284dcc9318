"""Keep freed memory in the process for the next tensor, instead of handing it back.

glibc's ``malloc`` serves every request above its mmap threshold (at most 32 MiB) with a
fresh ``mmap`` and returns it to the system at ``free``. A run on a large graph allocates
such tensors at every step (GAT on Synthetic1: 2.1 M edges x 8 heads = 68 MB per
per-edge tensor; LANC on DBLP: 28 702 stacks x 11 x 256 = 323 MB), so every new tensor
starts as untouched pages and its first write pays one page fault per 4 KiB: an
elementwise product of two 68 MB tensors took 51-59 ms that way and 19-23 ms on reused
memory (``benchmarks/allocator.py``). Serving them from the main heap and trimming it only
above :data:`TRIM_THRESHOLD` reuses the same pages step after step (allocations of the
main thread; glibc's per-thread arenas still map requests above 64 MiB afresh).

Only where memory comes from changes. Correct code reads only what it wrote, and in
deterministic runs torch fills every new tensor with NaN anyway, so no value moves (the
benchmark compares histories). During a run the heap can grow past the run's peak of live
memory (free chunks below its top stay mapped); :func:`release_freed_memory` hands all
free pages back after each run, so a sweep worker does not hold one run's heap through
the next. ``GRAPHNETZ_KEEP_FREED_MEMORY=0`` leaves the allocator as the C library set it.
Without glibc (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
#: Free memory at the top of the heap beyond this goes back to the system (1 GiB).
TRIM_THRESHOLD = 1 << 30
OPT_OUT = "GRAPHNETZ_KEEP_FREED_MEMORY"

_LIBC: list = [None]  # the C library, once it took the settings


def keep_freed_memory() -> bool:
    """Serve large allocations from the heap and keep freed memory for reuse, once per
    process (inherited by forked workers). True when glibc took the settings."""
    if _LIBC[0] is None:
        _LIBC[0] = _set_glibc_options() if os.environ.get(OPT_OUT, "1") != "0" else False
    return _LIBC[0] is not False


def release_freed_memory() -> None:
    """Hand every free page of the heap back to the system (``malloc_trim(0)``), where
    :func:`keep_freed_memory` kept them: between runs, not between steps."""
    if _LIBC[0]:
        _LIBC[0].malloc_trim(0)


def _set_glibc_options():
    """The C library after ``mallopt`` took both settings, or False."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own C library: no search, no subprocess
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    # trim threshold first: mallopt returns 1 on success
    if mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) and mallopt(M_MMAP_MAX, 0):
        return libc
    return False
