"""Submitit launchers whose requeued jobs resume: ``hydra/launcher=slurm`` and
``hydra/launcher=submitit_local_resuming`` (graphnetz/sweep/requeue.py says why).

Defined only when hydra-submitit-launcher is installed (``pip install graphnetz[slurm]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphnetz.sweep.requeue import with_resume

try:
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import (
        BaseSubmititLauncher,
        LocalLauncher,
        SlurmLauncher,
    )
except ImportError:  # the slurm extra is not installed: no such launchers
    BaseSubmititLauncher = None

if BaseSubmititLauncher is not None:

    class _ResumingRequeue(BaseSubmititLauncher):
        def checkpoint(self, sweep_overrides: Sequence[str], *args: Any, **kwargs: Any) -> Any:
            """What submitit requeues when the job is preempted or times out: the same
            job, with ``resume=true``."""
            import submitit

            return submitit.helpers.DelayedSubmission(
                self, with_resume(sweep_overrides), *args, **kwargs
            )

    class ResumingSlurmLauncher(_ResumingRequeue, SlurmLauncher):
        """submitit's Slurm launcher; requeued jobs resume from the run's checkpoint."""

    class ResumingLocalLauncher(_ResumingRequeue, LocalLauncher):
        """The same for local processes (how the requeue path is tested without Slurm)."""
