"""The multi-label analysis notebook runs top to bottom on small inputs (HumLoc, 300 nodes)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "multilabel_analysis.ipynb"


def executed_outputs(monkeypatch, mirror: Path | None, data_dir: Path, where: Path) -> list:
    """The notebook's outputs, run from ``where`` on HumLoc and a 300-node generator sweep
    (``mirror`` None: no GRAPHNETZ_DATA_MIRROR); none an error."""
    if mirror is None:
        monkeypatch.delenv("GRAPHNETZ_DATA_MIRROR", raising=False)
    else:
        monkeypatch.setenv("GRAPHNETZ_DATA_MIRROR", str(mirror))
    monkeypatch.setenv("GRAPHNETZ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("GRAPHNETZ_NB_DATASETS", "humloc")
    monkeypatch.setenv("GRAPHNETZ_NB_SYN_NODES", "300")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(where)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs


def test_notebook_executes_on_small_inputs(mirror, tmp_path, monkeypatch):
    outputs = executed_outputs(monkeypatch, mirror, tmp_path / "data", NOTEBOOK.parent)
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "humloc" in html and "3106" in html  # the statistics table
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 3  # hist, CCNS, sweep


def test_without_a_mirror_the_notebook_skips_the_datasets_and_runs_the_generator(
    tmp_path, monkeypatch
):
    """A clone without ../shared/data beside it (and no GRAPHNETZ_DATA_MIRROR)."""
    clone = tmp_path / "clone"
    (clone / "notebooks").mkdir(parents=True)
    (clone / "conf").mkdir()
    outputs = executed_outputs(monkeypatch, None, tmp_path / "data", clone / "notebooks")
    text = "".join(o.get("text", "") for o in outputs)
    assert "skipped humloc" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 1  # the generator sweep
