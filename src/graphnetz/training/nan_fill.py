"""torch's NaN fill of new tensors in deterministic runs: on for a run's first evaluated
epoch, off for the epochs after it (CPU loops only).

With deterministic algorithms on, torch fills every tensor it allocates with NaN
(``torch.utils.deterministic.fill_uninitialized_memory``), so a read of memory that
nothing wrote gives NaN, which the run reports as diverged, rather than whatever the
memory held. On CPU the fill is a full write of every new tensor: 1-6 % of a MUTAG or
ml_real run and about 5 % of a Cora run on this project's machine. Every epoch of a run
runs the same code (the same training step per batch, the same evaluation of every
split), so a kernel or model that reads memory it never wrote does so in the first epoch
that trains and evaluates, and that epoch shows it. What the first epoch cannot show is
a read that happens only for some later input: a shuffled mini-batch of another shape,
a resampled neighbourhood; such a read would give the memory's old contents there. The
lean and stacked CPU loops keep the fill until that first evaluated epoch has ended,
then turn it off, and put torch's setting back when training ends (also on an
exception). Values cannot change: the fill only writes memory that is about to be
written (tests compare the histories). Runs through Lightning's loop
(``fit_loop=lightning``, every GPU run) keep the fill for every epoch.
"""

from __future__ import annotations

from types import TracebackType

import torch.utils.deterministic as torch_deterministic


class FillUntilFirstEvaluation:
    """Context manager around a CPU training loop; call :meth:`epoch_ended` after each
    epoch with whether it evaluated."""

    def __enter__(self) -> FillUntilFirstEvaluation:
        self.previous = torch_deterministic.fill_uninitialized_memory
        return self

    def epoch_ended(self, evaluated: bool) -> None:
        if evaluated:
            torch_deterministic.fill_uninitialized_memory = False

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        torch_deterministic.fill_uninitialized_memory = self.previous
