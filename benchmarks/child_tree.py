"""Run a benchmark script's measuring half in a fresh process that imports graphnetz from
a given source tree, and read back the JSON it prints last (the ``--compare-src`` pattern
of ``epoch_speed.py`` and ``multilabel_epochs.py``), and the data folder those children share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

THIS_TREE = str(Path(__file__).resolve().parents[1] / "src")


def run_in_tree(script: str, args: list[str], src: str | None, **env: str) -> dict:
    """``python script *args`` with ``src`` (None: this tree's ``src``) first on
    ``PYTHONPATH`` and ``env`` added; the child's last stdout line parsed as JSON, or exit
    with its stderr. Folders already on ``PYTHONPATH`` (packages installed with
    ``--target``, say) stay after it."""
    before = os.environ.get("PYTHONPATH")
    path = src or THIS_TREE if not before else f"{src or THIS_TREE}{os.pathsep}{before}"
    environ = dict(os.environ, PYTHONPATH=path, **env)
    out = subprocess.run(
        [sys.executable, script, *args], env=environ, capture_output=True, text=True, check=False
    )
    if out.returncode:
        raise SystemExit(f"child ({src or 'this tree'}) failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


@contextmanager
def children_data_dir(given: str | None, prefix: str) -> Iterator[str]:
    """Where the children keep processed data: ``given`` (made absolute), else a new
    temporary folder removed afterwards, so nothing lands in the working directory."""
    if given:
        yield str(Path(given).resolve())
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield folder
