"""The statistical-report notebook runs top to bottom without error."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "statistical_report.ipynb"


def test_notebook_executes(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHNETZ_OUTPUT_DIR", str(tmp_path / "out"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    written = tmp_path / "out" / "statistical_report"
    assert (written / "results.csv").is_file()
    assert (written / "report" / "figures" / "cd_diagram.png").is_file()
    assert not any(tmp_path.glob("*.csv")) and not (tmp_path / "report").exists()
