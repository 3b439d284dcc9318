"""Requeued submitit jobs continue from the run's own checkpoint: the overrides they get.

When Slurm preempts a job, or its time limit is near (submitit's signal ``signal_delay_s``
seconds before), submitit calls the launcher's ``checkpoint`` and requeues what it
returns. The plugin's launchers requeue the job as it was submitted, so a sweep started
without ``resume=true`` would train the run from scratch again. The project's launchers
(``hydra_plugins.graphnetz_launchers``; Hydra loads launchers from that package only)
requeue it with ``resume=true``: the run continues from the checkpoint it saves in its run directory
(``checkpoint_every_s``; graphnetz/training/checkpoint.py), and a run whose record is
already complete is not run again.
"""

from __future__ import annotations

from collections.abc import Sequence

RESUME_OVERRIDE = "resume=true"


def with_resume(overrides: Sequence[str]) -> list[str]:
    """``overrides`` with any ``resume=...`` replaced by ``resume=true``."""
    kept = [o for o in overrides if o.split("=", 1)[0].lstrip("+~") != "resume"]
    return [*kept, RESUME_OVERRIDE]
