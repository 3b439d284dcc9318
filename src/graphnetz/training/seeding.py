"""Reseed every random number generator a run touches (python, numpy, torch) from its seed."""

from __future__ import annotations

import logging
import os
import random

import numpy as np
import torch


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch from the run seed; seed 0 is a seed like any other."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an integer, got {seed!r} ({type(seed).__name__})")
    if seed < 0 or seed >= 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    os.environ["PYTHONHASHSEED"] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    logging.getLogger("lightning.fabric.utilities.seed").setLevel(logging.WARNING)
