"""The selected point as a config the seed sweep takes: ``+tuned=<study>``.

Written to ``<config root>/tuned/<study>.yaml``: by default the checkout's ``conf/tuned/``
(git-ignored: a machine's results, like ``conf/local/``); any other root works with
``hydra.searchpath=[file://<root>]`` on the sweep's command line. The file sets the
searched keys and a ``tuning`` block (study, budget, metric, value, inner seeds), which
every tuned run's config, and so its record, carries.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from graphnetz.atomic import write_text
from graphnetz.config_dir import CONF_DIR
from graphnetz.tune.study import TuneError, TuneResult

TUNED_GROUP = "tuned"


def tuned_config_text(result: TuneResult) -> str:
    config = OmegaConf.create({})
    for key, value in result.params.items():
        OmegaConf.update(config, key, value, force_add=True)
    config.tuning = result.tuning_block()
    run = result.for_run
    header = (
        "# @package _global_\n"
        f"# Selected by `python -m graphnetz.tune` for {run['dataset']}/{run['task_type']} "
        f"{run['model']}: mean val {result.metric} {result.value:.4f} over seeds "
        f"{list(result.inner_seeds)}, {result.trials_complete} of {result.budget} trials ok.\n"
        f"# Use: python train.py -m +tuned={result.study} "
        + " ".join(result.base_overrides)
        + " seed='range(10)'\n"
    )
    return header + OmegaConf.to_yaml(config)


def check_tuned_target(study: str, storage: str, config_root: str | Path | None) -> Path:
    """Where ``+tuned=<study>`` goes, refused (before a search trains anything, too) when a
    file there holds another study's point (another ``--out``)."""
    root = Path(config_root) if config_root is not None else CONF_DIR
    path = root / TUNED_GROUP / f"{study}.yaml"
    if path.is_file():
        earlier = (OmegaConf.load(path).get("tuning") or {}).get("storage")
        if earlier != storage:
            raise TuneError(
                f"{path} holds the point of another study ({earlier}); delete it to "
                f"replace it, or give --config-root another folder"
            )
    return path


def write_tuned_config(result: TuneResult, config_root: str | Path | None = None) -> Path:
    """Write ``+tuned=<study>``; a file there from another study (another ``--out``) is
    not replaced: its runs would silently take this study's point."""
    path = check_tuned_target(result.study, result.storage, config_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, tuned_config_text(result))
