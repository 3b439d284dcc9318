"""Resumable runs: a periodic checkpoint in the run directory.

A run cut off mid-training (a killed job, a preempted Slurm allocation, a session that
ends) continues from its last checkpoint when the sweep is rerun with ``resume=true``,
instead of starting over. The checkpoint holds what Lightning saves (weights, optimiser,
loop state) plus the task's per-epoch history and the random number generator states, so
the resumed run gives the same history and result as an uninterrupted one (tested).

Saved at the end of a training epoch once ``checkpoint_every_s`` seconds have passed since
the last save (0 = every epoch; null = never), written to a temporary file of the
writer's own (two processes sharing a run directory never clash) and renamed, and deleted
when the run finishes. A checkpoint of another config, or written on another kind of
device (a GPU run resumed on a CPU host: the arithmetic differs), is ignored.
"""

from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from graphnetz.atomic import abandoned_temp_files, create_temp
from graphnetz.training.accelerators import cuda_available, run_device_type
from graphnetz.training.provenance import SOURCE_REVISION
from graphnetz.training.resolve import RunSpec, result_config

CHECKPOINT_NAME = "checkpoint.ckpt"
#: Where a checkpoint keeps what this callback adds (config, history, RNG states, times).
STATE_KEY = "graphnetz"
log = logging.getLogger("graphnetz")


def rng_state() -> dict[str, Any]:
    """Every generator training draws from: torch (CPU and CUDA), numpy, Python; as
    tensors and plain Python values, which Lightning's ``weights_only`` loading accepts."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {
        "torch": torch.get_rng_state(),
        "numpy": (kind, keys.tolist(), int(pos), int(has_gauss), float(cached)),
        "python": random.getstate(),
    }
    if cuda_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    random.setstate(state["python"])
    if "cuda" in state and cuda_available():  # as many GPUs as this process sees
        for device, cuda_state in enumerate(state["cuda"][: torch.cuda.device_count()]):
            torch.cuda.set_rng_state(cuda_state, device)


def read_resume_state(path: Path) -> dict[str, Any] | None:
    """What a checkpoint at ``path`` says about the run it resumes (its config, epochs
    done, time spent, revisions), or None when there is none or it is unreadable."""
    if not path.is_file():
        return None
    try:
        saved = torch.load(path, map_location="cpu", weights_only=False)[STATE_KEY]
    except Exception as err:  # half-written or foreign: start over
        log.warning("ignoring unreadable checkpoint %s (%s)", path, err)
        return None
    return {
        "config": saved["config"],
        "epochs": len(saved["history"]),
        "elapsed_s": saved["elapsed_s"],
        "revisions": saved["revisions"],
        "device": saved.get("device"),  # None: written before checkpoints named it
    }


class PeriodicCheckpoint:
    """A fit-loop callback (the lean loop calls it; under ``Trainer.fit`` it is wrapped in
    training/lightning_task.py's ``LightningCallback``). Saves ``path`` at the end of a
    training epoch at most every ``every_s`` seconds, and restores the task's history and
    the RNG states when a run resumes from it.

    ``config`` identifies the run (a checkpoint of another config is never resumed);
    ``started`` is the ``time.perf_counter()`` at which this process began the run and
    ``elapsed_before`` the wall time earlier processes spent on it, so the record's
    wall time covers every segment.
    """

    def __init__(
        self,
        path: Path,
        every_s: float,
        config: dict,
        revision: str | None,
        started: float,
        elapsed_before: float = 0.0,
        revisions_before: list | None = None,
    ) -> None:
        self.path, self.every_s, self.config = Path(path), float(every_s), config
        self.revisions = [*(revisions_before or []), revision]
        self.started, self.elapsed_before = started, elapsed_before
        self._last_save = time.perf_counter()

    # The loop's other hooks (Lightning's callback names): nothing to do there.
    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        pass

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        pass

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        pass

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.should_stop or time.perf_counter() - self._last_save < self.every_s:
            return  # a stopping run is about to write its record: nothing left to resume
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = create_temp(self.path)  # this writer's own name, renamed once complete
        os.close(fd)
        try:
            trainer.save_checkpoint(tmp)
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._last_save = time.perf_counter()

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict[str, Any]) -> None:
        checkpoint[STATE_KEY] = {
            "config": self.config,
            "history": pl_module.history,
            "rng": rng_state(),
            "elapsed_s": self.elapsed_before + time.perf_counter() - self.started,
            "revisions": self.revisions,
            "device": pl_module.device.type,
        }

    def on_load_checkpoint(self, trainer, pl_module, checkpoint: dict[str, Any]) -> None:
        saved = checkpoint[STATE_KEY]
        pl_module.history = list(saved["history"])
        pl_module.resumed = True
        # Restored at load time, before Lightning creates the training data iterator (which
        # draws a seed from the global RNG): the interrupted process drew that seed right
        # after the save, for the epoch this process resumes with (tested bit for bit).
        set_rng_state(saved["rng"])


def discard_checkpoint(run_dir: Path) -> None:
    """Remove a run's checkpoint: the run has its record. Saves cut off mid-write by a
    process that has ended go too; another live writer's temporary file is left alone."""
    path = Path(run_dir) / CHECKPOINT_NAME
    for stale in (path, path.with_name(path.name + ".tmp"), *abandoned_temp_files(path)):
        stale.unlink(missing_ok=True)  # ``.tmp``: the one fixed name of earlier versions


@dataclass(frozen=True)
class Checkpointing:
    """A run's checkpointing: the callbacks for the trainer (None: off), the checkpoint to
    resume from (None: start over), and what the record says about the resumption."""

    callbacks: list[PeriodicCheckpoint] | None = None
    resume_from: str | None = None
    resumed: dict[str, Any] | None = None


def checkpointing(spec: RunSpec, run_dir: Path | None, started: float | None) -> Checkpointing:
    """Periodic checkpoints in ``run_dir`` every ``checkpoint_every_s`` seconds (checked
    when the config was resolved), resumed from (with ``resume=true``) when one of this very
    config is there."""
    every_s = spec.config.get("checkpoint_every_s")
    if run_dir is None or every_s is None:
        return Checkpointing()
    path = Path(run_dir) / CHECKPOINT_NAME
    config = result_config(spec.config)
    state = read_resume_state(path) if spec.config.get("resume") else None
    if state is not None and result_config(state["config"]) != config:
        log.warning("ignoring checkpoint %s: it belongs to another config", path)
        state = None
    device = run_device_type(spec.config["trainer"])
    if state is not None and state["device"] not in (None, device):
        log.warning(
            "ignoring checkpoint %s: written by a run on %s, this one trains on %s",
            path,
            state["device"],
            device,
        )
        state = None
    started = time.perf_counter() if started is None else started
    if state is None:
        return Checkpointing([PeriodicCheckpoint(path, every_s, config, SOURCE_REVISION, started)])
    log.info("%s: resuming after epoch %d from %s", spec.label, state["epochs"], path)
    callback = PeriodicCheckpoint(
        path, every_s, config, SOURCE_REVISION, started, state["elapsed_s"], state["revisions"]
    )
    resumed = {
        "from_epoch": state["epochs"],
        "elapsed_s_before": round(state["elapsed_s"], 4),
        "revisions_before": state["revisions"],
    }
    return Checkpointing([callback], str(path), resumed)
