"""Divergence: a run whose training loss or primary metric became non-finite.

Such a run has no result to analyse (a NaN loss makes every later epoch meaningless, and a
selected epoch before it would hide that the configuration diverges), so it is recorded
with its own status, ``diverged``, and the first epoch at which it happened.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: History columns besides the primary metric whose non-finite value means divergence.
LOSS_COLUMNS = ("train_loss",)
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class Divergence:
    epoch: int
    column: str
    value: float

    @property
    def reason(self) -> str:
        return f"diverged at epoch {self.epoch}: {self.column} is {self.value}"


def divergence(history: Iterable[Mapping[str, float]], primary_metric: str) -> Divergence | None:
    """The first epoch whose training loss or primary metric (any split) is not a finite
    number, or None."""
    watched = (*LOSS_COLUMNS, *(f"{split}_{primary_metric}" for split in SPLITS))
    for row in history:
        for column in watched:
            value = row.get(column)
            if isinstance(value, (int, float)) and not math.isfinite(value):
                return Divergence(int(row.get("epoch", -1)), column, float(value))
    return None
