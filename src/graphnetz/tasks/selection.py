"""Model selection over a per-epoch history: the final epoch, or the best validation epoch."""

from __future__ import annotations

import math
from collections.abc import Sequence

SELECTIONS = ("final", "best_val")


def select_epoch(history: Sequence[dict], key: str, direction: str, selection: str) -> int:
    """Index into ``history`` of the selected epoch.

    ``final``: the last evaluated epoch (the reference protocol).
    ``best_val``: the epoch whose ``key`` is best under ``direction`` ("max"/"min"); ties go to
    the earliest such epoch; NaN values never win.
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection={selection!r} is not valid; choose one of {list(SELECTIONS)}")
    if direction not in ("max", "min"):
        raise ValueError(f"direction={direction!r} is not valid; choose 'max' or 'min'")
    if not history:
        raise ValueError("cannot select an epoch from an empty history")
    if selection == "final":
        return len(history) - 1
    sign = 1.0 if direction == "max" else -1.0
    best_index, best_value = None, -math.inf
    for i, row in enumerate(history):
        if key not in row:
            raise KeyError(f"history has no {key!r}; available: {sorted(row)}")
        value = row[key]
        if value is None or math.isnan(value):
            continue
        if sign * value > best_value:
            best_index, best_value = i, sign * value
    return len(history) - 1 if best_index is None else best_index


def evaluated_epoch(epoch: int, every: int, max_epochs: int | None) -> bool:
    """Whether 0-based ``epoch`` is evaluated with ``trainer.check_val_every_n_epoch=every``:
    every ``every``-th epoch, and always the last (what ``final`` selection reports)."""
    return (epoch + 1) % every == 0 or (max_epochs is not None and epoch + 1 == max_epochs)


def epochs_since_best(history: Sequence[dict], key: str, direction: str) -> int:
    """Trained epochs since the best validation epoch (what early-stopping patience
    counts, also when not every epoch is evaluated)."""
    best = select_epoch(history, key, direction, "best_val")
    return int(history[-1]["epoch"]) - int(history[best]["epoch"])
