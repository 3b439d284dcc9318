"""Sweep-level machinery that runs beside Hydra: progress, the end-of-sweep summary and
exit code (:mod:`.callbacks`), counting a sweep's jobs (:mod:`.jobs`), and launchers that
resume a requeued Slurm job from its checkpoint (:mod:`.requeue`), job configs composed once
per config-group choice (:mod:`.composition`) and our Hydra plugins made discoverable
(:mod:`.plugins`)."""
