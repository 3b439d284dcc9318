"""Hyperparameter search per (task, model) on the validation metric: ``python -m
graphnetz.tune`` (docs/tuning.md). :mod:`.space` reads a search space, :mod:`.study` runs
the resumable Optuna study, :mod:`.selected` writes the chosen point as ``+tuned=<name>``."""
