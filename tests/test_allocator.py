"""Freed memory kept for the next large tensor (graphnetz.training.allocator)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

# A fresh process (malloc's settings are per process) computes two 64 MiB tensors from a
# third and frees them, as a training step does; the page faults of ten steps after three
# warm-up steps are counted. Kept memory is not always reused at once (the heap's free
# chunks settle over a few steps: 0-4 tensors' pages in ten steps here); returned memory
# faults on every page of every new tensor (20 tensors' pages; fewer faults, as many
# tensors, where transparent huge pages are always on). Then the heap is trimmed, as
# after a run, and one more step is counted: its tensors map fresh pages again.
PROBE = """
import json, resource
import torch
from graphnetz.training.allocator import keep_freed_memory, release_freed_memory
faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt
kept = keep_freed_memory()
x = torch.randn(16 * 1024 * 1024)
for step in range(13):
    if step == 3:
        before = faults()
    y = x * 2
    z = y + x
    del y, z
steps = faults() - before
release_freed_memory()
before = faults()
y = x * 2
print(json.dumps({"kept": kept, "faults": steps, "after_release": faults() - before}))
"""

glibc_only = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's mallopt",
)


def _probe(setting: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHNETZ_KEEP_FREED_MEMORY"}
    if setting is not None:
        env["GRAPHNETZ_KEEP_FREED_MEMORY"] = setting
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@glibc_only
def test_large_tensors_reuse_freed_pages_unless_opted_out_and_a_trim_returns_them():
    kept, returned = _probe(None), _probe("0")
    assert kept["kept"] is True and returned["kept"] is False
    assert returned["faults"] > 0
    assert kept["faults"] < returned["faults"] / 2  # mostly the freed pages, still mapped
    # trimmed: the next tensor maps fresh pages, as one does when memory is returned
    assert kept["after_release"] > returned["faults"] / 20 / 2


def test_the_setting_is_taken_once_per_process_and_opting_out_skips_it(monkeypatch):
    from graphnetz.training import allocator

    calls = []
    monkeypatch.setattr(allocator, "_LIBC", [None])
    monkeypatch.setattr(allocator, "_set_glibc_options", lambda: calls.append(1) or object())
    monkeypatch.delenv(allocator.OPT_OUT, raising=False)
    assert allocator.keep_freed_memory() and allocator.keep_freed_memory()
    assert calls == [1]
    monkeypatch.setattr(allocator, "_LIBC", [None])
    monkeypatch.setenv(allocator.OPT_OUT, "0")
    assert not allocator.keep_freed_memory()
    allocator.release_freed_memory()  # nothing kept: nothing to trim, no error
    assert calls == [1]
