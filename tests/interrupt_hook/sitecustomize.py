"""Test helper: interrupt a training run mid-way, in whatever process a launcher starts.

Put this folder on ``PYTHONPATH`` and set ``GRAPHNETZ_TEST_INTERRUPT=<epoch>:<signal>:<seed>``
(e.g. ``2:KILL:1``): the run with that seed sends itself the signal right after its
checkpoint of that (0-based) epoch is saved. ``KILL`` stands for a job killed without
warning, ``USR2`` for the signal Slurm (and submitit's local executor) sends before
preempting or timing out a job. A resumed run starts after that epoch, so it is never
interrupted twice.
"""

import os

_SPEC = os.environ.get("GRAPHNETZ_TEST_INTERRUPT")

if _SPEC:
    import signal

    from graphnetz.training.checkpoint import PeriodicCheckpoint

    _epoch, _signal, _seed = _SPEC.split(":")
    _original = PeriodicCheckpoint.on_train_epoch_end

    def _interrupting(self, trainer, module):
        _original(self, trainer, module)
        seed_matches = f"seed={_seed}" in str(getattr(module, "progress_label", ""))
        if seed_matches and trainer.current_epoch == int(_epoch) and self.path.exists():
            os.kill(os.getpid(), getattr(signal, f"SIG{_signal}"))

    PeriodicCheckpoint.on_train_epoch_end = _interrupting
