"""The recipe of one run: resolved config -> data -> model -> task module -> trained result.

Reads top to bottom like the run protocol: seed, load the dataset, let the task type prepare
its split, seed again, build the model at the data's level, precompute what the model needs
from the graph, instantiate the task module (with its optimiser), fit, and return what the
record needs. Raises on any failure; :mod:`graphnetz.training.run` records it.

Python callers (:mod:`graphnetz.api`) may hand in what they built instead of what the
config names: ``load_data`` (a function returning the run's dataset, called where the
loader would be) and ``model_factory`` (:class:`graphnetz.training.build.ModelFactory`).
Everything else, the config included, is the same as for ``train.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from hydra.utils import instantiate
from omegaconf import OmegaConf
from torch import nn

from graphnetz.data.feature_rules import with_feature_rule
from graphnetz.data.loading import load_dataset
from graphnetz.models.contract import capabilities
from graphnetz.models.features import embedding_decay_warning
from graphnetz.tasks.base import GraphTask, TaskData
from graphnetz.training.accelerators import accelerator_available
from graphnetz.training.allocator import keep_freed_memory
from graphnetz.training.build import ModelFactory, build_model, incompatibility
from graphnetz.training.checkpoint import Checkpointing
from graphnetz.training.facts import dataset_facts
from graphnetz.training.lean_loop import LeanLoop, is_lean_checkpoint, lean_fit_refusal
from graphnetz.training.pairing import pairing_fingerprint
from graphnetz.training.resolve import RunSpec
from graphnetz.training.seeding import seed_everything
from graphnetz.training.threads import default_threads

log = logging.getLogger("graphnetz")


@dataclass(frozen=True)
class Trained:
    """What a finished training contributes to the run record."""

    metrics: dict[str, dict[str, float]]
    selected_epoch: int
    epochs_run: int
    history: list[dict[str, float]]
    data: dict[str, Any]
    dataset_facts: dict[str, Any]
    primary_metric: str
    pairing: dict[str, str] | None = None


@dataclass(frozen=True)
class Skipped:
    """The model does not serve the task type (decided before any data is loaded)."""

    reason: str


@dataclass(frozen=True)
class Built:
    """A run ready to fit: the task's data, the model and the task module wrapping it."""

    data: TaskData
    model: nn.Module
    module: GraphTask
    pairing: dict[str, str] | None = None


def build_run(
    spec: RunSpec,
    load_data: Callable[[], Any] | None = None,
    model_factory: ModelFactory | None = None,
) -> Built:
    """Load and prepare the data, build the model at the data's level and the task module."""
    config = spec.config
    keep_freed_memory()  # once per process: large tensors reuse freed pages (allocator.py)
    if config.get("num_threads"):
        torch.set_num_threads(int(config["num_threads"]))
    seed_everything(spec.seed)
    paths = config["paths"]
    if load_data is None:
        dataset = load_dataset(
            config["dataset"]["loader"], paths["data_dir"], paths["data_mirror"], seed=spec.seed
        )
    else:
        dataset = load_data()
    # a rule name in dataset.features builds the features of a featureless graph
    dataset = with_feature_rule(
        dataset,
        config["dataset"].get("features"),
        spec.dataset,
        splits_edges=spec.task_type == "link_pred",
    )
    data = spec.task_cls.prepare(dataset, seed=spec.seed, split=config["dataset"].get("split"))
    pairing = pairing_fingerprint(dataset, data)  # what a paired comparison assumes shared
    if not config.get("num_threads"):  # null: by the graph's size (training/threads.py)
        torch.set_num_threads(default_threads(data))
    seed_everything(spec.seed)  # model init does not depend on how much randomness prep used
    level = data.level or spec.task_cls.level()
    model = build_model(
        config["model"], level, data.in_channels, data.out_channels, model_factory, **data.extras
    )
    caps = capabilities(model)
    if caps.precomputes:
        model.precompute(data.graph, spec.seed)
    module = instantiate(OmegaConf.create(spec.task_cfg), model=model, _convert_="all")
    module.progress_label = spec.label
    if data.primary_metric is not None:
        module.primary_metric = data.primary_metric
    if caps.uses_node_features:
        _warn_embedding_decay(spec, data, module)
    return Built(data, model, module, pairing)


class UnresumableCheckpoint(RuntimeError):
    """The run's checkpoint cannot be resumed by the loop this run needs (raised before
    any training): a lean-loop checkpoint where Lightning's loop must run, e.g. a run
    started on a CPU host and resumed where a GPU makes ``accelerator=auto`` pick it."""


def train_and_evaluate(
    spec: RunSpec,
    ckpt: Checkpointing | None = None,
    load_data: Callable[[], Any] | None = None,
    model_factory: ModelFactory | None = None,
) -> Trained | Skipped:
    """Train and evaluate the run, or say why it is skipped.

    ``ckpt`` (:func:`graphnetz.training.checkpoint.checkpointing`) saves checkpoints while
    training and may resume from one left by an interrupted run of this config.
    ``load_data`` and ``model_factory``: see :func:`build_run`.
    """
    reason = incompatibility(spec.config["model"], spec.task_type, model_factory)
    if reason is not None:  # checked before any data is loaded
        return Skipped(reason)
    built = build_run(spec, load_data, model_factory)
    data, module = built.data, built.module
    ckpt = ckpt or Checkpointing()
    module.eval_loaders = data.eval_loaders  # evaluated inside each epoch (tasks/base.py)
    _fit(spec, module, data.train_loader, ckpt)
    return trained_result(spec, built)


def trained_result(spec: RunSpec, built: Built) -> Trained:
    """What the record needs from a run whose module has trained."""
    module, data = built.module, built.data
    loader_cfg = spec.config["dataset"]["loader"]
    return Trained(
        metrics=module.selected_metrics(),
        selected_epoch=module.history[module.selected_epoch()]["epoch"],
        epochs_run=int(module.history[-1]["epoch"]) + 1,  # trained, evaluated or not
        history=module.history,
        data=data.info,
        dataset_facts=dataset_facts(spec.task_cls, data, spec.dataset, loader_cfg),
        primary_metric=module.primary_metric,
        pairing=built.pairing,
    )


def _fit(spec: RunSpec, module: GraphTask, loader: Any, ckpt: Checkpointing) -> None:
    """``Trainer.fit``, through the lean loop where it gives the same result."""
    trainer_cfg = spec.config["trainer"]
    refusal = "fit_loop=lightning"
    if spec.config.get("fit_loop", "auto") == "auto":
        refusal = lean_fit_refusal(trainer_cfg, module, loader, ckpt.callbacks, ckpt.resume_from)
    if refusal is None:
        settings = {k: v for k, v in trainer_cfg.items() if k != "_target_"}
        LeanLoop(**settings, callbacks=ckpt.callbacks).fit(module, loader, ckpt.resume_from)
        return
    log.debug("%s: Lightning's fit loop (%s)", spec.label, refusal)
    if ckpt.resume_from is not None and is_lean_checkpoint(ckpt.resume_from):
        raise UnresumableCheckpoint(
            f"{ckpt.resume_from} was written by the lean CPU loop, and this run needs "
            f"Lightning's loop ({refusal}), which cannot resume it"
        )
    from graphnetz.training.lightning_task import LightningCallback, fit_with_lightning

    callbacks = [LightningCallback(c) for c in ckpt.callbacks or []] or None
    device = {}
    if trainer_cfg.get("accelerator", "auto") == "auto" and not accelerator_available():
        device = {"accelerator": "cpu"}  # not Apple's MPS, which Lightning's auto would take
    trainer = instantiate(spec.section("trainer"), callbacks=callbacks, **device)
    fit_with_lightning(trainer, module, loader, ckpt.resume_from)


def _warn_embedding_decay(spec: RunSpec, data: TaskData, module: GraphTask) -> None:
    if module.decoupled_weight_decay:  # AdamW: no coupled L2 to pin the embedding rows
        return
    x, n_train = getattr(data.graph, "x", None), data.info.get("n_train")
    warning = embedding_decay_warning(x, module.weight_decay, n_train)
    if warning:
        log.warning("%s: %s", spec.label, warning)
