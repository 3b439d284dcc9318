"""Mini-batch optimisation inside a task: Lightning hands over a whole split per epoch.

Why: the batch size is a task hyperparameter (``task.batch_size``), but the loaders are
built by ``prepare`` before the task module exists. So the loader yields the split once
per epoch and the task cuts it into mini-batches itself, one optimiser step per batch.
"""

from __future__ import annotations

from collections.abc import Iterator

from torch import Tensor


class MiniBatchSteps:
    """Mixin for a :class:`GraphTask`: define :meth:`minibatch_losses` (a generator)."""

    def minibatch_losses(self, split_data) -> Iterator[Tensor]:
        raise NotImplementedError

    def training_step(self, split_data, batch_idx):
        optimizer = self.optimizers()
        for loss in self.minibatch_losses(split_data):  # lazy: each loss after the last step
            optimizer.zero_grad()
            self.manual_backward(loss)
            optimizer.step()
            self._train_losses.append(loss.detach())


def check_batch_size(batch_size) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"task.batch_size must be a positive integer, got {batch_size!r}")
    return batch_size
