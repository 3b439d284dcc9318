"""``train.py`` / ``graphnetz-train``: one Hydra run or a ``-m`` sweep of runs.

A single run that fails or diverges exits with status 1 (a sweep never stops for one run:
each run's outcome is in its record). Sweep runs with ``resume=true`` skip every run whose
identity has a finished record anywhere in the sweep directory.
"""

from __future__ import annotations

import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from graphnetz.cli import run_dirs
from graphnetz.cli.quick_exit import exit_after
from graphnetz.config_dir import CONF_DIR
from graphnetz.sweep.plugins import expose_hydra_plugins
from graphnetz.training.run import run_experiment

run_dirs.register()  # before Hydra names the run directory
expose_hydra_plugins()  # before Hydra looks for its sweeper and launchers


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def main(cfg: DictConfig) -> float | None:
    hydra_cfg = HydraConfig.get()
    sweep = hydra_cfg.mode == RunMode.MULTIRUN
    record = run_experiment(
        cfg, hydra_cfg.runtime.output_dir, done_under=hydra_cfg.sweep.dir if sweep else None
    )
    if not sweep and record.status in ("failed", "diverged"):
        sys.exit(1)  # the record and the log line above say why
    # What a sweeper optimises: the validation score, never the test score.
    return record.validation_value() if record.status == "ok" else None


def cli() -> None:
    """``graphnetz-train``: :func:`main`, then the end of the process without teardown."""
    exit_after(main, sys.argv[0])


if __name__ == "__main__":
    exit_after(main, __file__)
