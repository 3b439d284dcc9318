"""The report's module graph: writers are functions of the analysis and never reach back
into ``core``; the package loads no data, task or training code."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import graphnetz.report

REPORT_DIR = Path(graphnetz.report.__file__).parent
PACKAGE = "graphnetz.report"
WRITERS = ("markdown", "markdown_datasets", "latex", "figures", "serialize", "writer")
FORBIDDEN = ("graphnetz.data", "graphnetz.tasks", "graphnetz.training", "graphnetz.cli")


def imported_modules(module: str) -> set[str]:
    """Absolute names of every module ``graphnetz.report.<module>`` imports, at any depth
    of its code (function-level imports included); ``from . import x`` gives ``.x``."""
    tree = ast.parse((REPORT_DIR / f"{module}.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([PACKAGE, *([base] if base else [])])
                if not node.module:  # from . import records
                    names.update(f"{base}.{alias.name}" for alias in node.names)
                    continue
            names.add(base)
    return names


def report_modules() -> list[str]:
    return sorted(p.stem for p in REPORT_DIR.glob("*.py"))


def internal_edges() -> dict[str, set[str]]:
    """Report module -> the report modules it imports."""
    prefix = f"{PACKAGE}."
    return {
        m: {n.removeprefix(prefix) for n in imported_modules(m) if n.startswith(prefix)}
        for m in report_modules()
    }


def _is_under(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def test_no_writer_imports_core():
    for writer in WRITERS:
        assert "core" not in internal_edges()[writer], writer


def test_core_imports_the_writers_at_module_top():
    tree = ast.parse((REPORT_DIR / "core.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level}
    assert {"markdown", "latex", "figures", "serialize", "writer"} <= top


def test_report_modules_import_each_other_without_a_cycle():
    edges = internal_edges()
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join((*path, module))}"
        if module in done:
            return
        for target in edges.get(module, ()):
            visit(target, (*path, module))
        done.add(module)

    for module in edges:
        visit(module, ())


def test_report_modules_import_no_data_task_training_or_cli_code():
    for module in report_modules():
        bad = [n for n in imported_modules(module) if any(_is_under(n, f) for f in FORBIDDEN)]
        assert not bad, f"graphnetz.report.{module} imports {bad}"


def test_importing_the_report_loads_no_data_task_or_training_module():
    code = (
        "import sys, graphnetz.report; "
        f"print([m for m in sys.modules if m.startswith({FORBIDDEN!r})])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_analyze_command_imports_neither_torch_nor_lightning():
    """A report of current records needs no training code: its imports cost seconds."""
    check = (
        "import sys, graphnetz.cli.analyze; "
        "print(sorted(m for m in ('torch', 'lightning', 'torch_geometric') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_run_on_the_lean_loop_imports_neither_lightning_nor_torchmetrics(tmp_path):
    """Lightning, and the torchmetrics / scipy.signal / matplotlib it brings, are about a
    third of a training process's imports: the lean loop (and a node task) needs none.
    Nor does a PyG dataset's loader need networkx or scipy.optimize (the combinatorial
    generators' solvers): about a second in every worker's first run."""
    check = (
        "import sys\n"
        "from hydra import compose, initialize_config_dir\n"
        "from graphnetz.config_dir import CONF_DIR\n"
        "from graphnetz.training.run import run_experiment\n"
        "with initialize_config_dir(config_dir=str(CONF_DIR), version_base='1.3'):\n"
        "    cfg = compose('config', overrides=['dataset=karate', 'trainer.max_epochs=2',\n"
        f"        'paths.output_dir={tmp_path}', 'paths.data_dir={tmp_path}/data'])\n"
        f"record = run_experiment(cfg, r'{tmp_path}/run')\n"
        "heavy = ('lightning', 'torchmetrics', 'scipy.signal', 'matplotlib', 'networkx',\n"
        "         'scipy.optimize')\n"
        "print(record.status, sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "ok []"
