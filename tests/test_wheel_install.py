"""A wheel carries the configs: built, installed into a fresh venv, trained from elsewhere.

The wheel is built from a copy of the sources so the checkout gets no ``build/`` or
``*.egg-info``. The venv reaches this interpreter's site-packages (torch and friends)
through a ``.pth`` file and gets graphnetz from the wheel only. The checkout that an
editable install points at cannot shadow it: its ``.pth`` entry (or import hook) comes
after the venv's own site-packages, and ``PYTHONPATH`` is cleared for every command.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from graphnetz.data.mirror import MIRROR_ENV

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
OFFLINE = ("--no-deps", "--no-index", "-q")  # pip: the wheel alone, nothing fetched


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    # outside the checkout: no PYTHONPATH, and no relative mirror meant for the checkout
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", MIRROR_ENV)}
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{args} exited {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of a copy of the sources, whose conf/ also holds a conf/local/ file."""
    root = tmp_path_factory.mktemp("wheel")
    sources = root / "sources"
    for name, skip in (("src", ()), ("conf", ("local",))):
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", *skip)
        shutil.copytree(REPO / name, sources / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, sources / name)
    (sources / "conf" / "local").mkdir()
    (sources / "conf" / "local" / "default.yaml").write_text("num_threads: 1\n")
    pip_wheel = ("-m", "pip", "wheel", *OFFLINE, "--no-build-isolation", "-w", root / "dist")
    run(sys.executable, *pip_wheel, sources, cwd=root)
    (found,) = (root / "dist").glob("graphnetz-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; torch etc. come from this interpreter."""
    path = tmp_path_factory.mktemp("venv")
    run(sys.executable, "-m", "venv", "--without-pip", path, cwd=path)
    (purelib,) = path.glob("lib/python*/site-packages")
    # this interpreter's site-packages, system or virtual: a venv made with
    # --system-site-packages would reach only the base interpreter's
    parents = [*site.getsitepackages(), site.getusersitepackages()]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in parents)
    (purelib / "zz_parent_site_packages.pth").write_text(lines)
    run(
        path / "bin" / "python", "-m", "pip", "install", *OFFLINE, "--no-cache-dir", wheel, cwd=path
    )
    return path


def test_the_wheel_ships_every_config_yaml_and_no_local_settings(wheel):
    tracked = {
        f"graphnetz/conf/{p.relative_to(REPO / 'conf').as_posix()}"
        for p in (REPO / "conf").rglob("*.yaml")
        if "local" not in p.relative_to(REPO / "conf").parts
    }
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("graphnetz/conf/") and n.endswith(".yaml")}
    assert shipped == tracked
    assert "graphnetz/conf/config.yaml" in shipped and "graphnetz/conf/__init__.py" in names


def test_graphnetz_train_from_the_wheel_runs_outside_the_checkout(venv, tmp_path):
    python, train = venv / "bin" / "python", venv / "bin" / "graphnetz-train"
    probe = "import graphnetz.config_dir as c; print(c.__file__); print(c.CONF_DIR)"
    module, conf = run(python, "-c", probe, cwd=tmp_path).stdout.splitlines()
    assert Path(module).is_relative_to(venv) and Path(conf).is_relative_to(venv)

    run_dir = tmp_path / "run"
    run(
        train,
        "dataset=karate",
        "model=gcn",
        "trainer.max_epochs=2",
        "num_threads=1",
        f"hydra.run.dir={run_dir}",
        cwd=tmp_path,
    )
    record = json.loads((run_dir / "result.json").read_text())
    assert record["status"] == "ok", record["reason"]
    assert (record["dataset"], record["model"], record["task_type"]) == (
        "karate",
        "gcn",
        "node_cls",
    )
    # Hydra records where it read the configs: the wheel's copy, not the checkout's conf/
    sources = (run_dir / ".hydra" / "hydra.yaml").read_text()
    assert f"path: {conf}" in sources and str(REPO / "conf") not in sources
