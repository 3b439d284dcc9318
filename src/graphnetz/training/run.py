"""The run protocol (SPEC §3): one dataset x task x model x seed -> one run record.

``run_experiment`` never raises for a problem of the run itself: an incompatible
model/task pair is recorded as ``skipped``, any error as ``failed``, so one run can never
stop a sweep. The record is written atomically into the run directory.
"""

from __future__ import annotations

import copy
import logging
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import torch
from hydra.utils import get_class, instantiate
from omegaconf import DictConfig, OmegaConf

from graphnetz.data.loading import load_dataset
from graphnetz.models.build import build_model, default_dropout, incompatibility
from graphnetz.models.features import embedding_decay_warning
from graphnetz.training.checkpoint import (
    CHECKPOINT_NAME,
    PeriodicCheckpoint,
    discard_checkpoint,
    read_resume_state,
)
from graphnetz.training.record import (
    RECORD_NAME,
    SCHEMA_VERSION,
    SOURCE_REVISION,
    library_versions,
    read_record,
    write_json_atomic,
)
from graphnetz.training.resolve import resolve_run
from graphnetz.training.seeding import seed_everything

log = logging.getLogger("graphnetz")
# Settings that change how a run executes but not its result (resume an earlier sweep
# with resume=true or another thread count and its complete runs still count).
RESULT_NEUTRAL_KEYS = ("resume", "num_threads", "checkpoint_every_s")


def _quiet_libraries() -> None:
    for name in (
        "gensim",
        "lightning.pytorch.utilities.rank_zero",
        "lightning.pytorch.accelerators.cuda",
        "lightning.fabric.utilities.seed",
        "lightning.pytorch",
    ):
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore", message=".*does not have many workers.*")
    warnings.filterwarnings("ignore", message=".*LeafSpec.*")
    warnings.filterwarnings("ignore", message=".*Total length of .* across ranks is zero.*")
    warnings.filterwarnings("ignore", message=".*You defined a `validation_step` but have no.*")
    warnings.filterwarnings("ignore", message=".*is an invalid value for `num_sanity_val_steps`.*")
    # torch labels its sparse CSR kernels beta; GCN and SAGE aggregate through them.
    warnings.filterwarnings("ignore", message=".*Sparse CSR tensor support is in beta.*")
    warnings.filterwarnings("ignore", message=".*Sparse invariant checks are implicitly.*")


def _base_record(cfg: DictConfig, run_dir: Path | None) -> dict[str, Any]:
    dataset = cfg.get("dataset") or {}
    model = cfg.get("model") or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "status": None,
        "reason": None,
        "error": None,
        "task": None,
        "dataset": dataset.get("name"),
        "category": dataset.get("category"),
        "task_type": None,
        "model": model.get("name"),
        "seed": cfg.get("seed"),
        "primary_metric": None,
        "direction": None,
        "metrics": {},
        "selection": None,
        "selected_epoch": None,
        "epochs_run": 0,
        "history": [],
        "data": {},
        "wall_time_s": None,
        "config": OmegaConf.to_container(cfg, resolve=False),
        "versions": library_versions(),
        "run_dir": str(run_dir) if run_dir else None,
    }


def train_and_evaluate(
    cfg: DictConfig,
    record: dict[str, Any],
    run_dir: Path | None = None,
    started: float | None = None,
) -> dict[str, Any]:
    """Run the protocol, filling ``record`` in place; raises on failure.

    With a ``run_dir`` and ``checkpoint_every_s`` set, training saves a checkpoint there,
    and with ``resume=true`` continues from one left by an interrupted run of this config.
    """
    spec = resolve_run(cfg)
    task_cls = get_class(spec.task_cfg["_target_"])
    record.update(
        task=f"{spec.dataset}/{spec.task_type}",
        task_type=spec.task_type,
        primary_metric=task_cls.primary_metric,
        direction=task_cls.direction,
        selection=spec.selection,
    )
    reason = incompatibility(cfg.model, spec.task_type)
    if reason is not None:  # checked before any data is loaded
        record.update(status="skipped", reason=reason)
        return record

    if cfg.get("num_threads"):
        torch.set_num_threads(int(cfg.num_threads))
    seed_everything(spec.seed)
    dataset = load_dataset(
        cfg.dataset.loader, cfg.paths.data_dir, cfg.paths.get("data_mirror"), seed=spec.seed
    )
    split = cfg.dataset.get("split")
    split = OmegaConf.to_container(split, resolve=True) if split is not None else None
    data = task_cls.prepare(dataset, seed=spec.seed, split=split)
    seed_everything(spec.seed)  # model init does not depend on how much randomness data prep used
    model = build_model(
        cfg.model, spec.task_type, data.in_channels, data.out_channels, **data.extras
    )
    if hasattr(model, "prepare"):
        model.prepare(data.graph, spec.seed)
    module = instantiate(spec.task_cfg, model=model, _convert_="all")
    module.progress_label = run_label(record)
    warning = embedding_decay_warning(getattr(data.graph, "x", None), module.weight_decay)
    if warning and getattr(model, "uses_node_features", True):
        log.warning("%s: %s", run_label(record), warning)
    if data.primary_metric is not None:
        module.primary_metric = data.primary_metric
        record["primary_metric"] = data.primary_metric
    trainer_cfg = OmegaConf.to_container(cfg.trainer, resolve=True)
    trainer_cfg["max_epochs"] = spec.max_epochs
    checkpoint, ckpt_path = _checkpointing(cfg, record, run_dir, started)
    trainer = instantiate(trainer_cfg, callbacks=[checkpoint] if checkpoint else None)
    trainer.fit(
        module,
        train_dataloaders=data.train_loader,
        val_dataloaders=data.eval_loaders,
        ckpt_path=ckpt_path,
    )
    record.update(
        status="ok",
        metrics=module.selected_metrics(),
        selected_epoch=module.history[module.selected_epoch()]["epoch"],
        epochs_run=len(module.history),
        history=module.history,
        data=data.info,
    )
    return record


def _checkpointing(
    cfg: DictConfig, record: dict[str, Any], run_dir: Path | None, started: float | None
) -> tuple[PeriodicCheckpoint | None, str | None]:
    """The checkpoint callback of this run (None: off) and the checkpoint to resume from."""
    every_s = cfg.get("checkpoint_every_s")
    if run_dir is None or every_s is None:
        return None, None
    if isinstance(every_s, bool) or not isinstance(every_s, int | float) or every_s < 0:
        raise ValueError(
            f"checkpoint_every_s must be a number of seconds >= 0 "
            f"(0 = every epoch) or null (off), got {every_s!r}"
        )
    path = run_dir / CHECKPOINT_NAME
    config = result_config(cfg)
    state = read_resume_state(path) if cfg.get("resume") else None
    if state is not None and comparable(state["config"]) != config:
        log.warning("ignoring checkpoint %s: it belongs to another config", path)
        state = None
    started = time.perf_counter() if started is None else started
    if state is None:
        return PeriodicCheckpoint(path, every_s, config, SOURCE_REVISION, started), None
    record["resumed"] = {
        "from_epoch": state["epochs"],
        "elapsed_s_before": round(state["elapsed_s"], 4),
        "revisions_before": state["revisions"],
    }
    log.info("%s: resuming after epoch %d from %s", run_label(record), state["epochs"], path)
    callback = PeriodicCheckpoint(
        path, every_s, config, SOURCE_REVISION, started, state["elapsed_s"], state["revisions"]
    )
    return callback, str(path)


def run_experiment(cfg: DictConfig, run_dir: str | Path | None = None) -> dict[str, Any]:
    """Run one configured experiment and write ``result.json`` into ``run_dir`` (if given)."""
    _quiet_libraries()
    run_dir = Path(run_dir) if run_dir is not None else None
    cfg = with_task_defaults(cfg)
    if cfg.get("resume") and run_dir is not None:
        done = completed_record(cfg, run_dir)
        if done is not None:
            log.info("%s (resumed: record already complete)", summarize(done))
            return done
    start = time.perf_counter()
    record = _base_record(cfg, run_dir)
    try:
        train_and_evaluate(cfg, record, run_dir, start)
    except Exception as err:  # a failed run is a result, never the end of the sweep
        record.update(
            status="failed", reason=f"{type(err).__name__}: {err}", error=traceback.format_exc()
        )
        log.error("run failed: %s: %s", type(err).__name__, err)
    before = record.get("resumed", {}).get("elapsed_s_before", 0.0)
    record["wall_time_s"] = round(before + time.perf_counter() - start, 4)
    if run_dir is not None:
        write_json_atomic(run_dir / RECORD_NAME, record)
        discard_checkpoint(run_dir)  # finished: nothing to resume
    log.info("%s", summarize(record))
    return record


def with_task_defaults(cfg: DictConfig) -> DictConfig:
    """A copy of ``cfg`` with ``model.dropout: null`` set to the task type's default, so the
    record's resolved config says what ran. Config errors are left for the run to record."""
    model = cfg.get("model")
    if model is None or "dropout" not in model or model.dropout is not None:
        return cfg
    try:
        dropout = default_dropout(resolve_run(cfg).task_type)
    except Exception:
        return cfg
    cfg = copy.deepcopy(cfg)
    cfg.model.dropout = dropout
    return cfg


def completed_record(cfg: DictConfig, run_dir: Path) -> dict[str, Any] | None:
    """The run's existing record if it finished (ok or skipped) with this very config."""
    try:
        record = read_record(run_dir / RECORD_NAME)
    except (OSError, ValueError):
        return None  # absent, half-written or foreign: run again
    same = comparable(record.get("config") or {}) == result_config(cfg)
    return record if same and record["status"] in ("ok", "skipped") else None


def comparable(config: dict) -> dict:
    """A stored config without what cannot change a result: the neutral keys, and an
    empty ``local`` group (present only on machines with a ``conf/local/default.yaml``)."""
    return {
        k: v
        for k, v in config.items()
        if k not in RESULT_NEUTRAL_KEYS and not (k == "local" and not v)
    }


def result_config(cfg: DictConfig) -> dict:
    """The part of the config that decides a run's result (what resume compares)."""
    return comparable(OmegaConf.to_container(cfg, resolve=False))


def run_label(record: dict[str, Any]) -> str:
    """``dataset/task_type model seed=S``: how log lines name a run."""
    return f"{record.get('task') or record.get('dataset')} {record.get('model')} seed={record.get('seed')}"


def summarize(record: dict[str, Any]) -> str:
    head = run_label(record)
    if record["status"] != "ok":
        return f"{head}: {record['status']} ({record.get('reason')})"
    metric = record["primary_metric"]
    value = record["metrics"].get("test", record["metrics"].get("val", {})).get(metric)
    return (
        f"{head}: test {metric}={value:.4f} (epoch {record['selected_epoch']}, "
        f"{record['wall_time_s']:.1f} s)"
    )
