"""Turn a composed Hydra config into the concrete choices of one run.

``task=auto`` (the default) becomes the dataset's natural task type with that type's
config file; explicit ``task.*`` values win. ``trainer.max_epochs=null`` becomes the
dataset's per-task default. Everything is checked here, before any data is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

CONF_DIR = Path(__file__).resolve().parents[3] / "conf"
TASK_META_KEYS = ("type",)


@dataclass
class RunSpec:
    dataset: str
    category: str
    task_type: str
    model: str
    seed: int
    task_cfg: DictConfig  # has _target_, ready for instantiate (meta keys stripped)
    max_epochs: int
    selection: str


def task_config(cfg: DictConfig) -> DictConfig:
    """The task config of the run, with ``auto`` resolved against the dataset."""
    task = cfg.task
    task_type = task.get("type", "auto")
    if task_type == "auto":
        task_type = cfg.dataset.default_task
        path = CONF_DIR / "task" / f"{task_type}.yaml"
        if not path.is_file():
            valid = sorted(p.stem for p in (CONF_DIR / "task").glob("*.yaml") if p.stem != "auto")
            raise ValueError(
                f"dataset {cfg.dataset.name!r} declares default_task={task_type!r}, "
                f"which has no conf/task/{task_type}.yaml; valid: {valid}"
            )
        chosen = {
            k: v
            for k, v in OmegaConf.to_container(task, resolve=True).items()
            if v is not None and k != "type"
        }
        defaults = OmegaConf.load(path)
        foreign = sorted(set(chosen) - set(defaults))
        if foreign:
            valid = sorted(k for k in defaults if k not in ("_target_", "type"))
            raise ValueError(
                f"task.{foreign[0]} does not apply to task type {task_type!r} "
                f"(dataset {cfg.dataset.name!r}); its settings are {valid}"
            )
        task = OmegaConf.merge(defaults, chosen)
    served = list(cfg.dataset.get("task_types", []))
    if task.type not in served:
        raise ValueError(
            f"dataset {cfg.dataset.name!r} does not serve task type {task.type!r}; "
            f"it serves {served}"
        )
    return task


def resolve_run(cfg: DictConfig) -> RunSpec:
    seed = cfg.seed
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    task = task_config(cfg)
    epochs = cfg.trainer.get("max_epochs")
    if epochs is None:
        per_task = cfg.dataset.get("epochs") or {}
        if task.type not in per_task:
            raise ValueError(
                f"dataset {cfg.dataset.name!r} has no default epochs for "
                f"{task.type!r} (dataset.epochs={dict(per_task)}); "
                "set trainer.max_epochs"
            )
        epochs = per_task[task.type]
    if not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"trainer.max_epochs must be a positive integer, got {epochs!r}")
    task_cfg = OmegaConf.create(
        {
            k: v
            for k, v in OmegaConf.to_container(task, resolve=True).items()
            if k not in TASK_META_KEYS and v is not None
        }
    )
    return RunSpec(
        dataset=cfg.dataset.name,
        category=cfg.dataset.category,
        task_type=task.type,
        model=cfg.model.name,
        seed=seed,
        task_cfg=task_cfg,
        max_epochs=epochs,
        selection=task_cfg.get("selection", "final"),
    )
