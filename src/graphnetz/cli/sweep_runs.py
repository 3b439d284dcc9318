"""What a sweep directory holds: each run directory found in it, as a :class:`RunState`.

A run directory is one with a record, a checkpoint (``cut off``: resumed by
``resume=true``) or only a Hydra ``.hydra`` folder (``started``: still running, or killed
before its first checkpoint). A record is judged as ``analyze.py`` judges it
(:func:`graphnetz.report.records.add_record`): one it cannot read is ``unreadable``, with
why; an ``ok`` record whose primary test metric is NaN or infinite is ``failed``. A run is
named by its record, else by its directory's Hydra config.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from graphnetz.run_identity import config_identity, config_value, identity_in_name
from graphnetz.run_record import RECORD_NAME, STATUSES_BEST_FIRST, RunRecord

#: States of a run, best first: an identity seen in several directories takes the best.
STATES = (
    *STATUSES_BEST_FIRST,
    "cut off",
    "started",
    "unreadable",
    "missing",
)
CHECKPOINT_NAME = "checkpoint.ckpt"  # graphnetz.training.checkpoint.CHECKPOINT_NAME
SCHEMA_1_NOTE = "schema-1 record: resume=true runs it again"


@dataclass(frozen=True)
class RunState:
    """One run as found in the sweep directory (or expected and missing)."""

    state: str
    task: str
    model: str
    seed: object
    identity: str | None  # full, short (from a directory name), or None (schema 1)
    spent_s: float = 0.0  # in its folder (merged: the folder that speaks for the run)
    left_fraction: float = 1.0  # of a full run, what resume=true would still run
    error: str | None = None
    where: str | None = None
    kept: bool = False  # a finished record resume=true matches: it is not run again
    note: str | None = None  # why a run that looks done is run again
    #: Merged (:func:`graphnetz.cli.status.merge`): the time of all the run's folders,
    #: reruns included; None for one folder, whose time is ``spent_s``.
    all_folders_s: float | None = None

    @property
    def total_s(self) -> float:
        """Time spent on the run in all its folders."""
        return self.spent_s if self.all_folders_s is None else self.all_folders_s


def found_runs(sweep: Path) -> list[RunState]:
    """Every run directory under ``sweep`` (one with a record, a checkpoint or a Hydra
    ``.hydra`` folder), as a :class:`RunState`."""
    dirs = {
        p.parent for name in (RECORD_NAME, CHECKPOINT_NAME, ".hydra") for p in sweep.rglob(name)
    }
    return [s for s in (_state_of(d) for d in sorted(dirs)) if s is not None]


def _state_of(run_dir: Path) -> RunState | None:
    record = run_dir / RECORD_NAME
    if record.exists() or record.is_symlink():  # a dangling link is unreadable, as in analyze
        return _recorded(run_dir)
    if (run_dir / CHECKPOINT_NAME).is_file():
        return _cut_off(run_dir)
    config = _hydra_config(run_dir)
    if config is None:
        return None
    return RunState(
        state="started",
        **_labels(config),
        identity=identity_in_name(run_dir.name) or _composed_identity(config),
        where=str(run_dir),
    )


def _recorded(run_dir: Path) -> RunState:
    """A run directory with a record, judged as ``analyze.py`` judges it."""
    from graphnetz.report.records import Collected, add_record  # pandas: only when needed

    path = run_dir / RECORD_NAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return _unreadable(run_dir, f"{type(err).__name__}: {err}", {})
    verdict = Collected()
    add_record(verdict, raw, str(path))
    if verdict.unreadable:
        return _unreadable(run_dir, verdict.unreadable[0]["reason"], raw)
    rec = RunRecord.from_dict(raw)
    state, error = rec.status, _why(rec)
    if rec.status == "ok" and verdict.failed:  # e.g. a NaN test metric: not analysed
        state, error = "failed", verdict.failed[0]["error"]
    schema_1 = rec.schema_version == 1 and rec.finished  # resume cannot match it to a run
    kept = rec.finished and not schema_1
    config = rec.config if isinstance(rec.config, Mapping) else {}
    task = rec.task or task_key(
        rec.dataset or config_value(config, "dataset.name"),
        rec.task_type or config_value(config, "task.type"),  # a run failed at resolution
    )
    spent = rec.wall_time_s
    return RunState(
        state=state,
        task=str(task),
        model=str(rec.model),
        seed=rec.seed,
        identity=rec.run_identity() or identity_in_name(run_dir.name),
        spent_s=float(spent) if isinstance(spent, (int, float)) else 0.0,
        left_fraction=0.0 if kept else 1.0,
        error=error,
        where=str(run_dir),
        kept=kept,
        note=SCHEMA_1_NOTE if schema_1 else None,
    )


def _unreadable(run_dir: Path, reason: str, raw: Any) -> RunState:
    """A record ``analyze.py`` cannot read: named by what it still says, else by the run
    directory's Hydra config; run again by ``resume=true``."""
    fields = raw if isinstance(raw, Mapping) else {}
    config = _hydra_config(run_dir) or {}
    labels = _labels(config)
    stored = fields.get("identity")
    return RunState(
        state="unreadable",
        task=str(fields.get("task") or labels["task"]),
        model=str(fields.get("model") or labels["model"]),
        seed=fields.get("seed") if fields.get("seed") is not None else labels["seed"],
        identity=(stored if isinstance(stored, str) and stored else None)
        or identity_in_name(run_dir.name)
        or _composed_identity(config),
        error=reason,
        where=str(run_dir),
    )


def _why(rec: RunRecord) -> str | None:
    """The first line of the record's reason, else the last of its error (a traceback's
    last line names the exception); None when both are empty or blank."""
    for text, line in ((rec.reason, 0), (rec.error, -1)):
        lines = [x.strip() for x in str(text or "").splitlines() if x.strip()]
        if lines:
            return lines[line]
    return None


def task_key(dataset: object, task_type: object) -> str:
    """``dataset/task_type`` as a cell names its task (``?`` for a part not known)."""
    return "/".join("?" if part is None else str(part) for part in (dataset, task_type))


def _labels(config: Mapping[str, Any]) -> dict[str, Any]:
    """``task``, ``model`` and ``seed`` of a plain run config (``?`` where absent)."""
    model, seed = config_value(config, "model.name"), config_value(config, "seed")
    return {
        "task": task_key(config_value(config, "dataset.name"), config_value(config, "task.type")),
        "model": "?" if model is None else str(model),
        "seed": "?" if seed is None else seed,
    }


def _composed_identity(config: Mapping[str, Any]) -> str | None:
    """The short identity a run directory of this composed config is named by (a folder
    named by job number keeps its run's config in ``.hydra/config.yaml``); None for an
    empty config."""
    if not config:
        return None
    from graphnetz.training.resolve import composed_run_dir_name  # torch: only when needed

    return identity_in_name(composed_run_dir_name(OmegaConf.create(dict(config))))


def _cut_off(run_dir: Path) -> RunState:
    from graphnetz.training.checkpoint import read_resume_state  # torch: only when needed

    saved = read_resume_state(run_dir / CHECKPOINT_NAME) or {}
    config = saved.get("config") or _hydra_config(run_dir) or {}
    epochs = config_value(config, "trainer.max_epochs")
    done = saved.get("epochs", 0)
    left = 1.0 - done / epochs if isinstance(epochs, int) and epochs > 0 else 1.0
    return RunState(
        state="cut off",
        **_labels(config),
        identity=config_identity(saved["config"]) if saved else identity_in_name(run_dir.name),
        spent_s=float(saved.get("elapsed_s", 0.0)),
        left_fraction=max(0.0, left),
        error=f"checkpoint after epoch {done}" if saved else None,
        where=str(run_dir),
    )


def _hydra_config(run_dir: Path) -> dict | None:
    path = run_dir / ".hydra" / "config.yaml"
    if not path.is_file():
        return None
    try:
        config = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, OmegaConfBaseException):
        return {}  # half-written: the directory still counts as started
    return config if isinstance(config, dict) else {}
