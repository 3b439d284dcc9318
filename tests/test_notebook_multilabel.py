"""The multi-label analysis notebook runs top to bottom on small inputs (HumLoc, 300 nodes)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "multilabel_analysis.ipynb"


def test_notebook_executes_on_small_inputs(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHNETZ_NB_DATASETS", "humloc")
    monkeypatch.setenv("GRAPHNETZ_NB_SYN_NODES", "300")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "humloc" in html and "3106" in html  # the statistics table
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3  # hist, CCNS, sweep
