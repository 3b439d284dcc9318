"""``train.py`` / ``graphnetz-train``: one Hydra run or a ``-m`` sweep of runs."""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from graphnetz.config_dir import CONF_DIR
from graphnetz.training.run import run_experiment


@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="config")
def main(cfg: DictConfig) -> float | None:
    record = run_experiment(cfg, HydraConfig.get().runtime.output_dir)
    # What a sweeper optimises: the validation score, never the test score.
    return record.validation_value() if record.status == "ok" else None


if __name__ == "__main__":
    main()
