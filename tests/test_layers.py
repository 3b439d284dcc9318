"""Data flows one way: each layer of the package imports only the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "graphnetz"

# layer -> the graphnetz layers it must never import (directly or lazily inside a function)
FORBIDDEN = {
    "stats": {"data", "models", "tasks", "training", "report", "api", "cli", "analysis"},
    "analysis": {"models", "tasks", "training", "report", "api", "cli"},
    "data": {"models", "tasks", "training", "report", "api", "cli"},
    "models": {"tasks", "training", "report", "api", "cli"},
    "tasks": {"training", "report", "api", "cli"},
    "training": {"report", "api", "cli"},
    "run_record": {"data", "models", "tasks", "training", "report", "api", "cli", "analysis"},
}


def graphnetz_imports(path: Path) -> set[str]:
    """The first component after ``graphnetz.`` of every import in ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "graphnetz" and len(parts) > 1:
                found.add(parts[1])
    return found


def layer_files(layer: str) -> list[Path]:
    folder = PACKAGE / layer
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{layer}.py"]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_from_the_layers_above_it(layer):
    offending = {
        str(path.relative_to(PACKAGE)): sorted(graphnetz_imports(path) & FORBIDDEN[layer])
        for path in layer_files(layer)
    }
    assert {k: v for k, v in offending.items() if v} == {}
