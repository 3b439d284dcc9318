"""Shared fixtures: the real Hydra config, shrunk for tests, and the offline data mirror."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.errors import InstantiationException
from hydra.utils import instantiate
from omegaconf import OmegaConf

from graphnetz.config_dir import CONF_DIR
from graphnetz.training.resolve import TASK_META_KEYS

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO_ROOT.parent / "shared" / "data"


def mirror_path() -> Path:
    """The data mirror tests read; in CI (CI=true) a missing mirror fails instead of skipping."""
    path = Path(os.environ.get("GRAPHNETZ_DATA_MIRROR") or DEFAULT_MIRROR).resolve()
    if not path.is_dir():
        message = f"data mirror {path} not found (set GRAPHNETZ_DATA_MIRROR)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def one_thread():
    """One torch intra-op thread for the test, then the count it had before.

    The machines are small and shared: one thread avoids oversubscription when other
    processes run too, and restoring it keeps the setting from leaking into later tests.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def mirror() -> Path:
    return mirror_path()


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    """One processed-data folder per test session, so datasets are processed once."""
    return tmp_path_factory.mktemp("data")


@pytest.fixture
def make_cfg(data_dir, tmp_path):
    """Compose the real config with overrides (outputs under tmp_path, shared data dir)."""

    def _make(*overrides: str, mirror: Path | None = None):
        base = [f"paths.data_dir={data_dir}", f"paths.output_dir={tmp_path}"]
        if mirror is not None:
            base.append(f"paths.data_mirror={mirror}")
        with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
            return compose("config", overrides=base + list(overrides))

    return _make


@pytest.fixture
def make_task(make_cfg):
    """A task module built from the real ``conf/task/<type>.yaml`` (its defaults as numbers),
    around ``model``; ``overrides`` are further ``task.*`` values."""

    def _make(task_type: str, model, **overrides):
        cfg = make_cfg(
            f"task={task_type}", *(f"task.{k}={_hydra(v)}" for k, v in overrides.items())
        )
        node = OmegaConf.to_container(cfg.task, resolve=True)
        node = {k: v for k, v in node.items() if k not in TASK_META_KEYS}
        try:
            return instantiate(node, model=model, _convert_="all")
        except InstantiationException as err:  # the constructor's own error, as a test expects
            raise (err.__cause__ or err) from None

    return _make


def _hydra(value) -> str:
    return (
        "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    )
