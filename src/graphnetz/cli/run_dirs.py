"""The OmegaConf resolvers ``conf/hydra/default.yaml`` names run and sweep folders with.

- ``${graphnetz_run_name:}``: the run's directory name, ``<dataset>_<task type>_<model>_
  s<seed>_<short identity>`` (:func:`graphnetz.training.resolve.composed_run_dir_name`),
  computed from the job's own config without loading data;
- ``${graphnetz_launch_pid:}``: the id of the process that launched the sweep (cached in
  the config, so every job of a sweep, pickled to a joblib or submitit worker included,
  sees the launcher's value).

Registered when :mod:`graphnetz.cli.train` is imported, which every launcher does before it
runs a job (it unpickles the task function from that module).
"""

from __future__ import annotations

import os

from omegaconf import DictConfig, OmegaConf

from graphnetz.training.resolve import composed_run_dir_name


def run_name(*, _root_: DictConfig) -> str:
    job = OmegaConf.masked_copy(_root_, [k for k in _root_ if k != "hydra"])
    return composed_run_dir_name(job)


def register() -> None:
    OmegaConf.register_new_resolver("graphnetz_run_name", run_name, replace=True)
    OmegaConf.register_new_resolver(
        "graphnetz_launch_pid", lambda: str(os.getpid()), use_cache=True, replace=True
    )
