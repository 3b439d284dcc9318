"""The run protocol: one dataset x task x model x seed -> one run record.

``run_experiment`` never raises for a problem of the run itself: an incompatible model/task
pair is recorded as ``skipped``, any error (a config that cannot run included) as
``failed``, a non-finite training loss or primary metric as ``diverged``, so one run can
never stop a sweep. The config is resolved once
(:func:`graphnetz.training.resolve.resolve_run`), the recipe runs
(:func:`graphnetz.training.pipeline.train_and_evaluate`), and the record is assembled once
and written atomically into the run directory, never over the record of another identity.

With ``resume=true`` a run whose identity already has a finished record (ok, skipped or
diverged) in its run directory, or anywhere under ``done_under`` (the sweep directory,
old job-number directories included), is not run again.
"""

from __future__ import annotations

import logging
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf

from graphnetz.run_identity import identity_in_name, short_identity
from graphnetz.run_record import RECORD_NAME, RecordError, RunRecord
from graphnetz.training.allocator import release_freed_memory
from graphnetz.training.build import ModelFactory
from graphnetz.training.checkpoint import Checkpointing, checkpointing, discard_checkpoint
from graphnetz.training.divergence import divergence
from graphnetz.training.pipeline import (
    Skipped,
    Trained,
    UnresumableCheckpoint,
    train_and_evaluate,
)
from graphnetz.training.provenance import library_versions
from graphnetz.training.resolve import RunSpec, composed_identity, resolve_run
from graphnetz.training.stacked import take as stacked_result

log = logging.getLogger("graphnetz")


def quiet_libraries() -> None:
    for name in (
        "gensim",
        "lightning.pytorch.utilities.rank_zero",
        "lightning.pytorch.accelerators.cuda",
        "lightning.fabric.utilities.seed",
        "lightning.pytorch",
    ):
        logging.getLogger(name).setLevel(logging.WARNING)
    for message in (
        ".*does not have many workers.*",
        ".*LeafSpec.*",
        ".*Total length of .* across ranks is zero.*",
        ".*You defined a `validation_step` but have no.*",
        ".*is an invalid value for `num_sanity_val_steps`.*",
        # torch labels its sparse CSR kernels beta; GCN and SAGE aggregate through them.
        ".*Sparse CSR tensor support is in beta.*",
        ".*Sparse invariant checks are implicitly.*",
    ):
        warnings.filterwarnings("ignore", message=message)


def run_experiment(
    cfg: DictConfig,
    run_dir: str | Path | None = None,
    load_data: Callable[[], Any] | None = None,
    model_factory: ModelFactory | None = None,
    *,
    done_under: str | Path | None = None,
) -> RunRecord:
    """Run one configured experiment and write ``result.json`` into ``run_dir`` (if given).

    ``load_data`` and ``model_factory`` replace what the config's loader and model
    ``_target_`` would build (:func:`graphnetz.training.pipeline.build_run`). With
    ``resume=true``, the finished record of the same identity found in ``run_dir`` or
    under ``done_under`` is returned instead of running again."""
    quiet_libraries()
    run_dir = Path(run_dir) if run_dir is not None else None
    start = time.perf_counter()
    try:
        spec = resolve_run(cfg)
    except Exception as err:  # a config that cannot run is a failed run, not a crash
        return _finish(_unresolved_failure(cfg, err, run_dir, start), run_dir)
    hydra_dir = run_dir  # where a rerun's folder is counted from, again when it finishes
    if run_dir is not None:  # the run's own folder, before a checkpoint is written there
        run_dir = own_run_dir(spec.identity, run_dir, resuming=bool(spec.config.get("resume")))
    if spec.config.get("resume") and run_dir is not None:
        done = completed_record(spec, run_dir, done_under)
        if done is not None:
            log.info("%s (resumed: record already complete)", summarize(done))
            _note_record_dir(Path(done.run_dir))
            return done
    stacked = stacked_result(spec) if load_data is None and model_factory is None else None
    if stacked is not None:  # trained with the cell's other seeds (training/stacked.py)
        record = _record(spec, stacked.trained, None, run_dir, start)
        share = {"seeds": stacked.seeds, "wall_time_s": round(stacked.wall_time_s, 4)}
        record = replace(record, stacked=share, wall_time_s=share["wall_time_s"])
        release_freed_memory()
        return _finish(record, hydra_dir, chosen=run_dir)
    ckpt, resumed = Checkpointing(), None
    try:
        ckpt = checkpointing(spec, run_dir, start)
        resumed = ckpt.resumed
        outcome = _train(spec, ckpt, load_data, model_factory)
        if isinstance(outcome, UnresumableCheckpoint):  # before any training: start over
            log.warning("%s: %s; starting the run over", spec.label, outcome)
            discard_checkpoint(run_dir)
            ckpt = checkpointing(spec, run_dir, start)
            resumed = {"from_epoch": 0, "restarted": str(outcome)}
            outcome = train_and_evaluate(spec, ckpt, load_data, model_factory)
    except Exception as err:  # a failed run is a result, never the end of the sweep
        log.error("run failed: %s: %s", type(err).__name__, err)
        outcome = err
    release_freed_memory()  # the next run in this process starts without this one's heap
    return _finish(_record(spec, outcome, resumed, run_dir, start), hydra_dir, chosen=run_dir)


def _train(spec, ckpt, load_data, model_factory) -> Trained | Skipped | UnresumableCheckpoint:
    """:func:`train_and_evaluate`, or the checkpoint it could not resume, returned once
    this attempt's data and model are out of scope (not held through a second attempt
    by the exception's frames)."""
    try:
        return train_and_evaluate(spec, ckpt, load_data, model_factory)
    except UnresumableCheckpoint as err:
        err.__traceback__ = None
        return err


def record_failure(cfg: DictConfig, run_dir: str | Path, err: Exception) -> RunRecord:
    """Write the failed record of a run that could not finish in the process that ran it
    (a launcher's worker died under it), as any failed run's record is written."""
    start = time.perf_counter()
    run_dir = Path(run_dir)
    try:
        spec = resolve_run(cfg)
    except Exception as unresolved:
        return _finish(_unresolved_failure(cfg, unresolved, run_dir, start), run_dir)
    log.error("run failed: %s: %s", type(err).__name__, err)
    chosen = own_run_dir(spec.identity, run_dir)  # where the record goes, as it says
    # its checkpoint stays: resume=true continues the run from it
    record = _record(spec, err, None, chosen, start)
    return _finish(record, run_dir, keep_checkpoint=True, chosen=chosen)


def _record(
    spec: RunSpec,
    outcome: Trained | Skipped | Exception,
    resumed: dict[str, Any] | None,
    run_dir: Path | None,
    start: float,
) -> RunRecord:
    """The record of a resolved run; a resumed run's wall time counts every segment."""
    fields: dict[str, Any] = {"epochs_run": 0}
    diverged = (
        divergence(outcome.history, outcome.primary_metric)
        if isinstance(outcome, Trained)
        else None
    )
    if isinstance(outcome, Trained):
        fields = {
            "status": "ok",
            "metrics": outcome.metrics,
            "selected_epoch": outcome.selected_epoch,
            "epochs_run": outcome.epochs_run,
            "history": outcome.history,
            "data": outcome.data,
            "dataset_facts": outcome.dataset_facts,
            "primary_metric": outcome.primary_metric,
            "pairing": outcome.pairing,
        }
        if diverged is not None:  # kept for inspection, never analysed
            fields.update(status="diverged", reason=diverged.reason, diverged_epoch=diverged.epoch)
    elif isinstance(outcome, Skipped):
        fields.update(status="skipped", reason=outcome.reason)
    else:
        fields.update(status="failed", reason=_reason(outcome), error=_traceback(outcome))
    before = (resumed or {}).get("elapsed_s_before", 0.0)
    fields.setdefault("primary_metric", spec.task_cls.primary_metric)
    return RunRecord(
        **fields,
        task=spec.task_key,
        dataset=spec.dataset,
        category=spec.config["dataset"].get("category"),
        task_type=spec.task_type,
        model=spec.model,
        seed=spec.seed,
        direction=spec.task_cls.direction,
        selection=spec.selection,
        resumed=resumed,
        wall_time_s=round(before + time.perf_counter() - start, 4),
        config=spec.config,
        versions=library_versions(),
        run_dir=str(run_dir) if run_dir else None,
        identity=spec.identity,
        num_threads=torch.get_num_threads(),
    )


def _unresolved_failure(
    cfg: DictConfig, err: Exception, run_dir: Path | None, start: float
) -> RunRecord:
    """The record of a config that could not be resolved: stored as it was composed."""
    log.error("run failed: %s: %s", type(err).__name__, err)
    dataset, model = cfg.get("dataset") or {}, cfg.get("model") or {}
    return RunRecord(
        status="failed",
        reason=_reason(err),
        error=_traceback(err),
        dataset=dataset.get("name"),
        category=dataset.get("category"),
        model=model.get("name"),
        seed=cfg.get("seed"),
        wall_time_s=round(time.perf_counter() - start, 4),
        config=OmegaConf.to_container(cfg, resolve=False),
        versions=library_versions(),
        run_dir=str(run_dir) if run_dir else None,
        identity=composed_identity(cfg),
        num_threads=torch.get_num_threads(),
    )


def _finish(
    record: RunRecord,
    run_dir: Path | None,
    keep_checkpoint: bool = False,
    chosen: Path | None = None,
) -> RunRecord:
    """Write ``record`` into its own folder, :func:`own_run_dir` of the job's folder
    ``run_dir`` (Hydra's) as it is now: ``chosen``, the one the run took when it started
    (and announced), unless another writer finished a record there meanwhile, when the
    next free sibling of ``run_dir`` (``<run_dir>_rerun2``, not ``<chosen>_rerun1``)."""
    if run_dir is not None:
        resuming = bool((record.config or {}).get("resume"))
        run_dir = own_run_dir(record.identity, run_dir, resuming, quiet=chosen is not None)
        if chosen is not None and run_dir != chosen:
            log.warning(
                "%s: %s got a finished record meanwhile (another process); this one goes to %s",
                record.label(),
                chosen,
                run_dir,
            )
            record = replace(record, run_dir=str(run_dir))
            if not keep_checkpoint:
                discard_checkpoint(chosen)  # this run's own, in the folder it trained in
        meanwhile = _readable_record(run_dir) if resuming else None
        if (
            meanwhile is not None
            and meanwhile.finished
            and meanwhile.run_identity() == record.identity
        ):  # a second writer of the same resumed sweep finished this run first: it stays
            log.info("%s: finished meanwhile by another process; its record stays", record.label())
            _note_record_dir(run_dir)
            if not keep_checkpoint:
                discard_checkpoint(run_dir)
            return replace(meanwhile, run_dir=str(run_dir))
        record.write(run_dir)
        _note_record_dir(run_dir)
        if not keep_checkpoint:
            discard_checkpoint(run_dir)  # finished: nothing to resume
    log.info("%s", summarize(record))
    return record


#: Where this process's last run left its record (written, or found finished when
#: resumed): not always the folder Hydra made for the job (see :func:`own_run_dir` and
#: ``done_under``), and what a sweep's tally must read.
_last_record_dir: list[Path] = []


def _note_record_dir(path: Path) -> None:
    _last_record_dir[:] = [path]


def take_record_dir() -> Path | None:
    """Where the last run of this process left its record, once (None when no run
    finished since the last call)."""
    found = _last_record_dir[0] if _last_record_dir else None
    _last_record_dir.clear()
    return found


def _reason(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _traceback(err: BaseException) -> str:
    return "".join(traceback.format_exception(type(err), err, err.__traceback__))


def own_run_dir(
    identity: str | None, run_dir: Path, resuming: bool = False, *, quiet: bool = False
) -> Path:
    """``run_dir``, unless it holds a record that must stay, so that no finished result
    is ever overwritten:

    * the record of another identity, or a finished one whose identity is unknown
      (schema 1), as a run directory named without the identity can hold
      (``hydra.sweep.subdir=${hydra.job.num}``): then a sibling named after this run's
      identity;
    * this run's own finished record (``ok``, ``skipped``, ``diverged``), met by a rerun
      without ``resume=true`` (``resuming``: the caller returns that record instead), or a
      failure recorded for such a rerun: then the first sibling
      ``<run_dir>_rerun<k>`` holding no finished record, so the rerun's result, failed or
      not, stands beside the first (the report counts identical duplicates once and names
      conflicting ones).

    The sibling is announced in a warning, unless ``quiet`` (a caller that asks ahead of
    the run, which announces it itself, or asks again when it ends).
    """
    existing = _readable_record(run_dir)
    if existing is None:
        return run_dir
    there = existing.run_identity()
    if not existing.finished and (identity is None or there is None or there == identity):
        return run_dir  # a failed or unknown run of this identity: replaced
    if resuming and identity is not None and there == identity:
        return run_dir
    if identity is not None and there != identity:
        other = run_dir.with_name(f"{run_dir.name}_{short_identity(identity)}")
        (log.debug if quiet else log.warning)(
            "%s holds the record of another run (identity %s); writing this one (%s) to %s",
            run_dir,
            short_identity(there) if there else "unknown",
            short_identity(identity),
            other,
        )
    else:
        k = 1
        while _holds_finished(run_dir.with_name(f"{run_dir.name}_rerun{k}")):
            k += 1
        other = run_dir.with_name(f"{run_dir.name}_rerun{k}")
        (log.debug if quiet else log.warning)(
            "%s holds this run's finished record (%s); it stays, and this rerun without "
            "resume=true writes to %s (resume=true skips finished runs)",
            run_dir,
            existing.status,
            other,
        )
    return own_run_dir(identity, other, resuming, quiet=quiet)  # it may hold a record too


def _holds_finished(run_dir: Path) -> bool:
    record = _readable_record(run_dir)
    return record is not None and record.finished


def _readable_record(run_dir: Path) -> RunRecord | None:
    try:
        return RunRecord.read(run_dir / RECORD_NAME)
    except (OSError, RecordError):
        return None  # nothing (readable) to keep


def completed_record(
    spec: RunSpec, run_dir: Path, done_under: str | Path | None = None
) -> RunRecord | None:
    """The finished record (ok, skipped or diverged) of this run's identity, in ``run_dir``
    or anywhere under ``done_under``; None when there is none (run it)."""
    own = _finished_record(spec, Path(run_dir) / RECORD_NAME, explain=True)
    if own is not None or done_under is None:
        return own
    short = short_identity(spec.identity)
    for path in sorted(Path(done_under).rglob(RECORD_NAME)):
        named = identity_in_name(path.parent.name)
        if path.parent == Path(run_dir) or (named is not None and named != short):
            continue  # a directory named by another identity: no need to read it
        found = _finished_record(spec, path, explain=False)
        if found is not None:
            return found
    return None


def _finished_record(spec: RunSpec, path: Path, explain: bool) -> RunRecord | None:
    try:
        record = RunRecord.read(path)
    except (OSError, RecordError):
        return None  # absent, half-written or foreign: run again
    if record.schema_version == 1 and record.finished:
        if explain:
            log.info(
                "%s: its record is of schema 1 (config stored unresolved, so it cannot be "
                "matched with this run's resolved config): running it again",
                spec.label,
            )
        return None
    if not record.finished or record.run_identity() != spec.identity:
        return None
    return replace(record, run_dir=str(path.parent))  # where it is now (folders move)


#: Whether a finished run's log line shows its validation score instead of the test
#: score (see :func:`validation_scores_only`).
_VALIDATION_ONLY = [False]


@contextmanager
def validation_scores_only() -> Iterator[None]:
    """Inside, finished runs log their validation score, not the test score: a
    hyperparameter search must not show test results while it chooses."""
    before = _VALIDATION_ONLY[0]
    _VALIDATION_ONLY[0] = True
    try:
        yield
    finally:
        _VALIDATION_ONLY[0] = before


def summarize(record: RunRecord) -> str:
    head = record.label()
    if record.status != "ok":
        return f"{head}: {record.status} ({record.reason})"
    split, value = "test", record.test_value()
    if _VALIDATION_ONLY[0]:
        split, value = "val", record.validation_value()
    shown = "n/a" if value is None else f"{value:.4f}"
    return (
        f"{head}: {split} {record.primary_metric}={shown} "
        f"(epoch {record.selected_epoch}, {record.wall_time_s:.1f} s)"
    )
