"""Keep freed memory in the process for the next tensor, instead of handing it back.

glibc's ``malloc`` serves every request above its mmap threshold (at most 32 MiB) with a
fresh ``mmap`` and returns it to the system at ``free``. A run on a large graph allocates
such tensors at every step (GAT on Synthetic1: 2.1 M edges x 8 heads = 68 MB per
per-edge tensor; LANC on DBLP: 28 702 stacks x 11 x 256 = 323 MB), so every new tensor
starts as untouched pages and its first write pays one page fault per 4 KiB: an
elementwise product of two 68 MB tensors took 51-59 ms that way and 19-23 ms on reused
memory (``benchmarks/allocator.py``). Serving them from the heap and trimming it only
above :data:`TRIM_THRESHOLD` reuses the same pages step after step.

Only where the memory comes from changes, never a value; the process keeps up to its
peak footprint (plus :data:`TRIM_THRESHOLD`) until it exits. ``GRAPHNETZ_KEEP_FREED_MEMORY=0``
leaves the allocator as the C library set it. Without glibc (macOS, Windows, musl) this
does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
#: Free memory at the top of the heap beyond this goes back to the system (1 GiB).
TRIM_THRESHOLD = 1 << 30
OPT_OUT = "GRAPHNETZ_KEEP_FREED_MEMORY"

_DONE: list[bool | None] = [None]


def keep_freed_memory() -> bool:
    """Serve large allocations from the heap and keep freed memory for reuse, once per
    process (inherited by forked workers). True when glibc took the settings."""
    if _DONE[0] is None:
        _DONE[0] = os.environ.get(OPT_OUT, "1") != "0" and _set_glibc_options()
    return _DONE[0]


def _set_glibc_options() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # no C library with mallopt (musl has none)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # trim threshold first: mallopt returns 1 on success
    return bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) and mallopt(M_MMAP_MAX, 0))
