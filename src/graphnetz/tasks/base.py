"""The shared module of every task type.

A task type (node_cls, graph_cls, graph_reg, link_pred, ml_node_cls, ml_graph_cls) is one
subclass that says how to prepare its data (:meth:`prepare`), how to compute the training loss
(:meth:`training_loss`), how to turn a batch into predictions and targets per split
(:meth:`predict_splits`) and how to score them (:meth:`score`). The base class owns the
optimiser (built from the ``task.optimizer`` config node), the per-epoch history, early
stopping and model selection, so every task type records results the same way. Its
hyperparameters (lr, weight decay, ...) have no defaults here: they are the numbers of
``conf/task/<type>.yaml``, passed by the config.

A task is a plain ``nn.Module`` with Lightning's hook names (``training_step``,
``on_train_batch_end``, ``configure_optimizers``, ...): the lean fit loop
(training/lean_loop.py) drives it directly, so a run on that loop never imports Lightning
(about a third of a training process's import time, with the torchmetrics, scipy.signal
and torch._dynamo imports it brings). For ``Trainer.fit`` it is wrapped in a
LightningModule that forwards every hook (training/lightning_task.py).
"""

from __future__ import annotations

import inspect
import logging
import math
import numbers
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from graphnetz.task_types import TASK_LEVELS
from graphnetz.tasks.selection import (
    SELECTIONS,
    epochs_since_best,
    evaluated_epoch,
    select_epoch,
)

SPLITS = ("train", "val", "test")
PROGRESS_EVERY_S = 30.0
log = logging.getLogger("graphnetz")
#: ``params -> optimizer``: what ``task.optimizer`` (``_partial_: true``) instantiates to.
OptimizerFactory = Callable[[Iterable[nn.Parameter]], torch.optim.Optimizer]


def _joined(tensors: list[Tensor], join) -> Tensor:
    """``join(tensors)``, or the one tensor itself (same values, without the copy)."""
    return tensors[0] if len(tensors) == 1 else join(tensors)


@dataclass
class TaskData:
    """What a task type prepared from a dataset for one run (one seed)."""

    train_loader: Any
    eval_loaders: list[Any]
    in_channels: int
    out_channels: int
    # Model-building extras a task needs (e.g. number of relations), and facts for the record.
    extras: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    # The full graph for hooks such as DeepWalk's ``prepare`` (node-level tasks only).
    graph: Any = None
    # A task type may refine its primary metric once it has seen the data (relational
    # link prediction ranks by filtered MRR); None keeps the class's primary metric.
    primary_metric: str | None = None
    # The level the model works at (graphnetz.task_types.LEVELS); None: the task's own.
    level: str | None = None


class GraphTask(nn.Module):
    task_type: ClassVar[str]
    primary_metric: ClassVar[str]
    direction: ClassVar[str]  # "max" or "min"
    # The split whose metric is the run's result; "val" only for datasets without a test set.
    report_split: ClassVar[str] = "test"
    #: False where ``training_step`` steps the optimiser itself (mini-batch tasks).
    automatic_optimization: bool = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "task_type" in cls.__dict__ and cls.task_type not in TASK_LEVELS:
            raise TypeError(
                f"{cls.__name__}.task_type={cls.task_type!r} is not a declared task type; "
                f"declare it in graphnetz.task_types (valid: {list(TASK_LEVELS)})"
            )

    @classmethod
    def level(cls) -> str:
        """The level of the task's model output (``graphnetz.task_types.TASK_LEVELS``)."""
        return TASK_LEVELS[cls.task_type]

    def __init__(
        self,
        model: nn.Module,
        *,
        optimizer: OptimizerFactory,
        lr: float,
        weight_decay: float,
        selection: str = "final",
        patience: int | None = None,
    ) -> None:
        super().__init__()
        if selection not in SELECTIONS:
            raise ValueError(
                f"task.selection={selection!r} is not valid; choose one of {list(SELECTIONS)}"
            )
        if selection == "best_val" and self.report_split == "val":
            raise ValueError(
                "task.selection=best_val is refused: the reported metric of this task is the "
                "validation series itself, so picking its best epoch would report an optimistic "
                "maximum. Use task.selection=final."
            )
        if patience is not None and (isinstance(patience, bool) or not isinstance(patience, int)):
            raise ValueError(
                f"task.patience must be an integer >= 1 or null (off), got {patience!r}"
            )
        if patience is not None and (selection != "best_val" or patience < 1):
            raise ValueError(
                f"task.patience={patience!r} needs task.selection=best_val and a value >= 1 "
                "(early stopping watches the validation metric); with "
                f"task.selection={selection} set task.patience=null"
            )
        self.model = model
        for name, value in (("lr", lr), ("weight_decay", weight_decay)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"task.{name} must be a number, got {value!r}")
        self.lr, self.weight_decay = float(lr), float(weight_decay)
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"task.lr must be a positive number, got {lr!r}")
        if not (self.weight_decay >= 0 and math.isfinite(self.weight_decay)):
            raise ValueError(f"task.weight_decay must be a number >= 0, got {weight_decay!r}")
        if not callable(optimizer):
            raise TypeError(
                f"task.optimizer must build an optimiser from parameters (a config node "
                f"with _partial_: true), got {optimizer!r}"
            )
        for name, value in (("lr", self.lr), ("weight_decay", self.weight_decay)):
            given = (getattr(optimizer, "keywords", None) or {}).get(name)
            if given is not None and float(given) != value:
                raise ValueError(
                    f"task.optimizer.{name}={given!r} contradicts task.{name}={value!r}; "
                    f"set task.{name} (the optimiser follows it)"
                )
        self.optimizer_factory = optimizer
        self.selection = selection
        self.patience = patience
        self.history: list[dict[str, float]] = []
        self._train_losses: list[float] = []
        self._eval_outputs: dict[str, list] = defaultdict(list)
        self._last_progress = time.perf_counter()
        #: Names the run in progress lines (parallel sweep jobs share one log).
        self.progress_label = ""
        #: True when training continues from a checkpoint (set when it is loaded).
        self.resumed = False
        #: Loaders evaluated at the end of every training epoch, inside the epoch (see
        #: :meth:`on_train_batch_end`); None leaves evaluation to Lightning's validation loop.
        self.eval_loaders: list[Any] | None = None
        #: The optimiser while the lean loop (training/lean_loop.py) trains this module.
        self._lean_optimizer: torch.optim.Optimizer | None = None
        #: The loop training this module (LeanLoop or lightning.Trainer), None before fit.
        self.trainer: Any = None
        # The LightningModule wrapping this task under Trainer.fit (not a submodule).
        self.__dict__["_lightning"] = None

    @property
    def current_epoch(self) -> int:
        return int(self.trainer.current_epoch) if self.trainer is not None else 0

    @property
    def device(self) -> torch.device:
        first = next(self.parameters(), None)
        return first.device if first is not None else torch.device("cpu")

    def on_train_start(self) -> None:
        """Called once training starts, after the first epoch's batches are requested."""

    # ---- what subclasses define -------------------------------------------------------
    def training_loss(self, batch) -> Tensor:
        raise NotImplementedError

    def predict_splits(self, batch, dataloader_idx: int) -> dict[str, tuple[Tensor, Tensor]]:
        """Predictions and targets per split name for one evaluation batch."""
        raise NotImplementedError

    def score(self, preds: Tensor, targets: Tensor) -> dict[str, float]:
        raise NotImplementedError

    @classmethod
    def chance_level(cls, data: TaskData) -> dict[str, Any] | None:
        """The primary metric on the test split of a model that learned nothing
        (``{"metric", "split", "rule", "value"}``), or None where the type defines none."""
        return None

    @property
    def decoupled_weight_decay(self) -> bool:
        """Whether the optimiser decouples weight decay from the gradient (AdamW)."""
        cls = getattr(self.optimizer_factory, "func", self.optimizer_factory)
        return isinstance(cls, type) and issubclass(cls, torch.optim.AdamW)

    # ---- the fit loop's hooks (Lightning's names) ---------------------------------
    def configure_optimizers(self):
        return self.optimizer_factory(self.parameters(), **self._multi_tensor_update())

    def _multi_tensor_update(self) -> dict[str, Any]:
        """``foreach=True`` for an optimiser that takes it and was not told otherwise: one
        call per update step for all parameters instead of one per parameter tensor (on
        CPU torch chooses the per-tensor loop), with bit-identical updates (tested)."""
        if "foreach" in (getattr(self.optimizer_factory, "keywords", None) or {}):
            return {}
        cls = getattr(self.optimizer_factory, "func", self.optimizer_factory)
        try:
            takes_foreach = "foreach" in inspect.signature(cls).parameters
        except (TypeError, ValueError):
            return {}
        return {"foreach": True} if takes_foreach else {}

    def optimizers(self, use_pl_optimizer: bool = True):
        """The optimiser of a manually optimised task, from the loop that trains it."""
        if self._lightning is not None:
            return self._lightning.optimizers(use_pl_optimizer)
        return self._lean_optimizer

    def manual_backward(self, loss: Tensor, *args: Any, **kwargs: Any) -> None:
        if self._lightning is not None:
            self._lightning.manual_backward(loss, *args, **kwargs)
        else:
            loss.backward(*args, **kwargs)

    def training_step(self, batch, batch_idx):
        loss = self.training_loss(batch)
        self._train_losses.append(loss.detach())
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        """After an epoch's last batch, evaluate every split and record the epoch's row.

        The same model.eval() forward passes, at the same point of the epoch, as Lightning's
        validation loop (so the same history and random stream), without that loop's
        per-epoch setup, which costs more than the whole evaluation of a small graph.
        """
        if self.eval_loaders is None or not self.trainer.is_last_batch:
            return
        every, last = self.trainer.check_val_every_n_epoch, self.trainer.max_epochs
        if evaluated_epoch(self.current_epoch, every, last):
            self.evaluate_epoch()

    def evaluate_epoch(self) -> None:
        """Evaluate ``eval_loaders`` in eval mode without gradients, then record the row."""
        modes = {module: module.training for module in self.modules()}
        self.eval()
        try:
            with torch.inference_mode():
                for idx, loader in enumerate(self.eval_loaders or []):
                    for batch_idx, batch in enumerate(loader):
                        if self._lightning is not None and self.device.type != "cpu":
                            batch = self._lightning.transfer_to_device(batch, idx)
                        self.validation_step(batch, batch_idx, idx)
        finally:
            for module, mode in modes.items():
                module.training = mode
        self._record_epoch()

    def validation_step(self, batch, batch_idx, dataloader_idx: int = 0):
        for split, (preds, targets) in self.predict_splits(batch, dataloader_idx).items():
            self._eval_outputs[split].append((preds.detach(), targets.detach()))

    def on_validation_epoch_end(self) -> None:
        if self.trainer.sanity_checking:
            self._eval_outputs.clear()
            return
        self._record_epoch()

    def _record_epoch(self) -> None:
        row: dict[str, float] = {"epoch": int(self.current_epoch)}
        if self._train_losses:
            row["train_loss"] = float(_joined(self._train_losses, torch.stack).mean())
        for split in SPLITS:
            outs = self._eval_outputs.get(split)
            if not outs:
                continue
            preds = _joined([p for p, _ in outs], torch.cat)
            targets = _joined([t for _, t in outs], torch.cat)
            for name, value in self.score(preds, targets).items():
                row[f"{split}_{name}"] = float(value)
        self._train_losses.clear()
        self._eval_outputs.clear()
        self.history.append(row)
        self._report_progress(row)
        if self.patience is not None and self._should_stop_early():
            self.trainer.should_stop = True

    def _report_progress(self, row: dict[str, float]) -> None:
        """A log line at most every ``PROGRESS_EVERY_S`` seconds, so long runs show progress."""
        now = time.perf_counter()
        if now - self._last_progress < PROGRESS_EVERY_S:
            return
        self._last_progress = now
        key = f"val_{self.primary_metric}"
        log.info(
            "  %s epoch %d/%s  train_loss=%.4f  %s=%.4f",
            self.progress_label,
            row["epoch"] + 1,
            self.trainer.max_epochs,
            row.get("train_loss", float("nan")),
            key,
            row.get(key, float("nan")),
        )

    def _should_stop_early(self) -> bool:
        key = f"val_{self.primary_metric}"
        return epochs_since_best(self.history, key, self.direction) >= self.patience

    # ---- results ------------------------------------------------------------------
    def selected_epoch(self) -> int:
        return select_epoch(
            self.history, f"val_{self.primary_metric}", self.direction, self.selection
        )

    def selected_metrics(self) -> dict[str, dict[str, float]]:
        """Metrics per split at the selected epoch (``train`` also carries the loss)."""
        if not self.history:
            raise RuntimeError("no epoch was evaluated; is trainer.max_epochs >= 1?")
        row = self.history[self.selected_epoch()]
        metrics: dict[str, dict[str, float]] = {split: {} for split in SPLITS}
        for key, value in row.items():
            split, _, name = key.partition("_")
            if split in metrics:
                metrics[split][name] = value
        return {split: values for split, values in metrics.items() if values}
