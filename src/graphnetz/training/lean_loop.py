"""The lean fit loop: what ``lightning.Trainer.fit`` does for a GraphNetz run, without its
per-step machinery.

On a small graph Lightning's loop costs more than the model: about 40 hook dispatches, a
closure and progress bookkeeping per step, 1-2 ms per epoch on this project's 2-core
machine, where a whole Karate epoch computes in under one. For the runs the default
trainer config describes (one CPU device, no gradient clipping or accumulation, no
logger, loaders with a length, evaluation inside the epoch) this loop makes the same
calls in the same order, so the history, the random stream and the result are identical
(``tests/test_lean_loop.py`` compares them bit for bit with ``Trainer.fit`` on every task
type, and after a resumed checkpoint):

* epoch 0's training iterator is created before ``on_train_start`` (Lightning creates it
  while setting up the data), every later epoch's at the epoch's start;
* automatic optimisation: forward, ``zero_grad``, backward, optimiser step, per batch;
  manual optimisation: the task's ``training_step`` drives the optimiser itself;
* ``on_train_batch_end`` after every batch (where the task evaluates after the last),
  the callbacks' ``on_train_epoch_end`` after every epoch (periodic checkpoints), then
  the stop flag the task's early stopping sets and ``max_epochs``.

Any other trainer setting, a GPU, or a loader without a length goes to Lightning
(:func:`lean_fit_refusal` says why); ``fit_loop=lightning`` always does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import torch

from graphnetz.tasks.base import GraphTask
from graphnetz.tasks.selection import evaluated_epoch
from graphnetz.training.accelerators import accelerator_available
from graphnetz.training.checkpoint import PeriodicCheckpoint
from graphnetz.training.nan_fill import FillUntilFirstEvaluation

#: Trainer settings the lean loop reproduces, with the values it accepts (None: any).
LEAN_TRAINER_SETTINGS: Mapping[str, tuple | None] = {
    "_target_": ("lightning.Trainer", "lightning.pytorch.Trainer", "pytorch_lightning.Trainer"),
    "max_epochs": None,
    "accelerator": ("auto", "cpu"),
    "devices": (1, "1", "auto"),
    "deterministic": (True, False, None, "warn"),
    "enable_progress_bar": (False,),
    "enable_checkpointing": (False,),
    "enable_model_summary": (False,),
    "logger": (False, None),
    "num_sanity_val_steps": (0,),
    "check_val_every_n_epoch": None,  # a positive integer (checked below)
}
#: Callbacks whose hooks the lean loop calls (start, epoch start and end, end of training).
LEAN_CALLBACKS = (PeriodicCheckpoint,)
#: Marks a checkpoint written by this loop (Lightning's own have no such key).
LEAN_CHECKPOINT_KEY = "graphnetz_lean_loop"


def lean_fit_refusal(
    trainer_cfg: Mapping[str, Any],
    module: GraphTask,
    loader: Any,
    callbacks: Iterable[Any] | None = None,
    resume_from: str | None = None,
) -> str | None:
    """Why this run must go through ``lightning.Trainer.fit``, or None if the lean loop
    gives the same result."""
    refusal = lean_trainer_refusal(trainer_cfg)
    if refusal is not None:
        return refusal
    foreign = [c for c in callbacks or [] if not isinstance(c, LEAN_CALLBACKS)]
    if foreign:
        return f"callback {type(foreign[0]).__name__} may need Lightning's other hooks"
    if module.eval_loaders is None:
        return "the task evaluates in Lightning's validation loop"
    try:
        len(loader)
    except TypeError:
        return "the training loader has no length"
    if resume_from is not None and not is_lean_checkpoint(resume_from):
        return "the run resumes from a Lightning checkpoint"
    return None


def lean_trainer_refusal(trainer_cfg: Mapping[str, Any]) -> str | None:
    """Why the trainer config alone keeps a run off the lean loop, or None."""
    for key, value in trainer_cfg.items():
        if key not in LEAN_TRAINER_SETTINGS:
            return f"trainer.{key} is set"
        accepted = LEAN_TRAINER_SETTINGS[key]
        if accepted is not None and value not in accepted:
            return f"trainer.{key}={value!r}"
    for key in ("max_epochs", "check_val_every_n_epoch"):
        value = trainer_cfg.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"trainer.{key}={value!r} is not a positive integer"
    if trainer_cfg.get("accelerator", "auto") == "auto" and accelerator_available():
        return "trainer.accelerator=auto and an accelerator is available"
    return None


def is_lean_checkpoint(path: str | Path) -> bool:
    try:
        return LEAN_CHECKPOINT_KEY in torch.load(path, map_location="cpu", weights_only=False)
    except Exception:  # unreadable: Lightning's loader will say so
        return False


class LeanLoop:
    """Trains ``module`` on ``loader`` like ``Trainer.fit``; the module's ``trainer``
    while it runs (the attributes a task and Lightning's module properties read)."""

    sanity_checking = False
    training = True
    global_rank = 0

    def __init__(
        self,
        max_epochs: int,
        check_val_every_n_epoch: int = 1,
        deterministic: bool | str | None = None,
        callbacks: Iterable[Any] | None = None,
        **_settings_without_effect: Any,  # CPU, one device, no logger: nothing to set up
    ) -> None:
        self.max_epochs = int(max_epochs)
        self.check_val_every_n_epoch = int(check_val_every_n_epoch)
        self.callbacks = list(callbacks or [])
        self.current_epoch = 0
        self.global_step = 0
        self.is_last_batch = False
        self.should_stop = False
        self.train_dataloader: Any = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.lightning_module: GraphTask | None = None
        set_determinism(deterministic)

    def fit(self, module: GraphTask, loader: Any, ckpt_path: str | None = None) -> None:
        self.lightning_module, self.train_dataloader = module, loader
        module.trainer = self
        module.zero_grad()
        self.optimizer = module.configure_optimizers()
        module._lean_optimizer = self.optimizer
        try:
            if ckpt_path is not None:
                self._restore(ckpt_path)
            module.train()
            batches = iter(loader)  # epoch 0's, before on_train_start (as Lightning)
            self._callbacks("on_train_start", module)
            module.on_train_start()
            with FillUntilFirstEvaluation() as nan_fill:
                while self.current_epoch < self.max_epochs and not self.should_stop:
                    if batches is None:
                        batches = iter(loader)
                    self._callbacks("on_train_epoch_start", module)
                    self._run_epoch(module, batches, len(loader))
                    batches = None
                    self._callbacks("on_train_epoch_end", module)
                    nan_fill.epoch_ended(self._evaluated(self.current_epoch))
                    self.current_epoch += 1
            self._callbacks("on_train_end", module)
        finally:
            module._lean_optimizer = None

    def _evaluated(self, epoch: int) -> bool:
        return evaluated_epoch(epoch, self.check_val_every_n_epoch, self.max_epochs)

    def _callbacks(self, hook: str, module: GraphTask) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(self, module)

    def _run_epoch(self, module: GraphTask, batches, n_batches: int) -> None:
        for batch_idx, batch in enumerate(batches):
            self.is_last_batch = batch_idx + 1 >= n_batches
            with torch.enable_grad():
                if module.automatic_optimization:
                    loss = module.training_step(batch, batch_idx)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    outputs = {"loss": loss}
                else:
                    outputs = module.training_step(batch, batch_idx)
            self.global_step += 1
            module.on_train_batch_end(outputs, batch, batch_idx)
            if self.is_last_batch:
                break

    # ---- checkpoints (training/checkpoint.py's callback calls these) ------------------
    def save_checkpoint(self, path: str | Path) -> None:
        module = self.lightning_module
        checkpoint = {
            LEAN_CHECKPOINT_KEY: 1,
            "epoch": self.current_epoch,
            "global_step": self.global_step,
            "state_dict": module.state_dict(),
            "optimizer_states": [self.optimizer.state_dict()],
        }
        for callback in self.callbacks:
            callback.on_save_checkpoint(self, module, checkpoint)
        torch.save(checkpoint, path)

    def _restore(self, path: str | Path) -> None:
        module = self.lightning_module
        checkpoint = torch.load(path, map_location="cpu", weights_only=False)
        module.load_state_dict(checkpoint["state_dict"])
        self.optimizer.load_state_dict(checkpoint["optimizer_states"][0])
        self.current_epoch = int(checkpoint["epoch"]) + 1  # saved at that epoch's end
        self.global_step = int(checkpoint["global_step"])
        for callback in self.callbacks:
            callback.on_load_checkpoint(self, module, checkpoint)


def set_determinism(deterministic: bool | str | None) -> None:
    """The torch flags ``lightning.Trainer(deterministic=...)`` sets (CPU-relevant part)."""
    if deterministic == "warn":
        torch.use_deterministic_algorithms(True, warn_only=True)
    elif isinstance(deterministic, bool):
        torch.use_deterministic_algorithms(deterministic)
    if deterministic:
        torch.backends.cudnn.benchmark = False
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
