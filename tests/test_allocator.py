"""Freed memory kept for the next large tensor (graphnetz.training.allocator)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# A fresh process (malloc's settings are per process) computes two 64 MiB tensors from a
# third and frees them, as a training step does; the page faults of ten steps after three
# warm-up steps are counted. Kept memory is not always reused at once (the heap's free
# chunks settle over a few steps: 0-4 tensors' pages in ten steps here); returned memory
# faults on every page of every new tensor (20 tensors' pages).
PROBE = """
import json, resource
import torch
from graphnetz.training.allocator import keep_freed_memory
kept = keep_freed_memory()
x = torch.randn(16 * 1024 * 1024)
for step in range(13):
    if step == 3:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    y = x * 2
    z = y + x
    del y, z
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"kept": kept, "faults": faults}))
"""

PAGES_IN_64_MIB = 64 * 1024 * 1024 // 4096


def _probe(setting: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHNETZ_KEEP_FREED_MEMORY"}
    if setting is not None:
        env["GRAPHNETZ_KEEP_FREED_MEMORY"] = setting
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_large_tensors_reuse_the_pages_of_freed_ones_unless_opted_out():
    kept, returned = _probe(None), _probe("0")
    assert kept["kept"] is True and returned["kept"] is False
    assert returned["faults"] >= 20 * PAGES_IN_64_MIB  # fresh pages: one fault each
    assert kept["faults"] < 10 * PAGES_IN_64_MIB  # mostly the freed pages, still mapped


def test_the_setting_is_taken_once_per_process(monkeypatch):
    from graphnetz.training import allocator

    calls = []
    monkeypatch.setattr(allocator, "_DONE", [None])
    monkeypatch.setattr(allocator, "_set_glibc_options", lambda: calls.append(1) or True)
    monkeypatch.delenv(allocator.OPT_OUT, raising=False)
    assert allocator.keep_freed_memory() and allocator.keep_freed_memory()
    assert calls == [1]
