"""A task under ``lightning.Trainer.fit``: a LightningModule that forwards every hook.

Tasks (tasks/base.py) are plain modules so the lean loop never imports Lightning. Runs
the lean loop does not reproduce (a GPU, other trainer settings, ``fit_loop=lightning``)
go to Lightning through :class:`LightningTask`, which holds the task as its only
submodule and whose state dict *is* the task's (the same keys as when tasks were
LightningModules themselves, so checkpoints of either kind load in both loops), and
:class:`LightningCallback`, which hands the task, not the wrapper, to our callbacks.
Imported only on that path.
"""

from __future__ import annotations

from typing import Any

import lightning as L

from graphnetz.tasks.base import GraphTask


class LightningTask(L.LightningModule):
    """``task`` as a LightningModule: the same calls, in the order Lightning makes them."""

    def __init__(self, task: GraphTask) -> None:
        super().__init__()
        self.task = task
        self.automatic_optimization = task.automatic_optimization
        task.__dict__["_lightning"] = self

    # The task's own parameters and keys ("model.…"), not "task.model.…".
    def state_dict(self, *args: Any, **kwargs: Any):
        return self.task.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        return self.task.load_state_dict(state_dict, strict=strict, assign=assign)

    def transfer_to_device(self, batch: Any, dataloader_idx: int) -> Any:
        return self._apply_batch_transfer_handler(batch, dataloader_idx=dataloader_idx)

    def setup(self, stage: str) -> None:
        self.task.trainer = self.trainer

    def configure_optimizers(self):
        return self.task.configure_optimizers()

    def on_train_start(self) -> None:
        self.task.on_train_start()

    def training_step(self, batch, batch_idx):
        return self.task.training_step(batch, batch_idx)

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        self.task.on_train_batch_end(outputs, batch, batch_idx)

    def validation_step(self, batch, batch_idx, dataloader_idx: int = 0):
        return self.task.validation_step(batch, batch_idx, dataloader_idx)

    def on_validation_epoch_end(self) -> None:
        self.task.on_validation_epoch_end()


class LightningCallback(L.Callback):
    """One of our loop callbacks (training/checkpoint.py) under ``Trainer.fit``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    @property
    def state_key(self) -> str:
        return type(self.inner).__qualname__

    def on_train_start(self, trainer, pl_module) -> None:
        self.inner.on_train_start(trainer, pl_module.task)

    def on_train_epoch_start(self, trainer, pl_module) -> None:
        self.inner.on_train_epoch_start(trainer, pl_module.task)

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        self.inner.on_train_epoch_end(trainer, pl_module.task)

    def on_train_end(self, trainer, pl_module) -> None:
        self.inner.on_train_end(trainer, pl_module.task)

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict[str, Any]) -> None:
        self.inner.on_save_checkpoint(trainer, pl_module.task, checkpoint)

    def on_load_checkpoint(self, trainer, pl_module, checkpoint: dict[str, Any]) -> None:
        self.inner.on_load_checkpoint(trainer, pl_module.task, checkpoint)


def fit_with_lightning(trainer: L.Trainer, task: GraphTask, loader: Any, ckpt_path=None) -> None:
    trainer.fit(LightningTask(task), train_dataloaders=loader, ckpt_path=ckpt_path)
