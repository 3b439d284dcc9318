"""The selected point as a config the seed sweep takes: ``+tuned=<study>``.

Written to ``<config root>/tuned/<study>.yaml``: by default the checkout's ``conf/tuned/``
(git-ignored: a machine's results, like ``conf/local/``); any other root works with
``hydra.searchpath=[file://<root>]`` on the sweep's command line. The file sets the
searched keys and a ``tuning`` block (study, budget, metric, value, inner seeds), which
every tuned run's config, and so its record, carries.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from pathlib import Path

from omegaconf import OmegaConf

from graphnetz.atomic import write_text
from graphnetz.config_dir import CONF_DIR
from graphnetz.tune.study import TuneError, TuneResult

TUNED_GROUP = "tuned"
#: the seeds of the seed sweep the command suggests: the benchmark's usual ten, so tuned
#: and untuned models pair by seed in the report
SWEEP_SEEDS = tuple(range(10))


def seed_sweep_command(result: TuneResult, config_root: str | Path | None = None) -> str:
    """The seed sweep at the selected point, one shell-quoted word per override; a config
    root other than the checkout's ``conf/`` is put on Hydra's search path."""
    words = ["python", "train.py", "-m", f"+tuned={result.study}", *result.base_overrides]
    root = Path(config_root).resolve() if config_root is not None else CONF_DIR.resolve()
    if root != CONF_DIR.resolve():
        words.append(f"hydra.searchpath=[file://{root}]")
    words.append(f"seed=range({len(SWEEP_SEEDS)})")
    return " ".join(shlex.quote(word) for word in words)


def reused_seeds(inner_seeds: Iterable[int]) -> list[int]:
    """The search's inner seeds that the suggested seed sweep would report again."""
    return sorted(set(inner_seeds) & set(SWEEP_SEEDS))


def reused_seeds_warning(inner_seeds: Iterable[int]) -> str | None:
    """Why a sweep on :data:`SWEEP_SEEDS` would be optimistic, or None when it is apart.

    Only a warning: the command is a suggestion, and a sweep on other seeds is honest."""
    reused = reused_seeds(inner_seeds)
    if not reused:
        return None
    return (
        f"inner seeds {reused} are also seeds of the suggested seed sweep "
        f"(seed=range({len(SWEEP_SEEDS)})): its runs at those seeds are the runs the point "
        "was picked on, so the reported scores would be optimistic; search on other inner "
        "seeds (the spaces' default: 100, 101, 102) or sweep seeds apart from them"
    )


def tuned_config_text(result: TuneResult, config_root: str | Path | None = None) -> str:
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
        f"# Use: {seed_sweep_command(result, config_root)}\n"
    )
    warning = reused_seeds_warning(result.inner_seeds)
    if warning is not None:
        header += f"# Warning: {warning}\n"
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
    return write_text(path, tuned_config_text(result, config_root))
