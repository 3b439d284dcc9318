"""``python -m graphnetz status SWEEP_DIR [OVERRIDES ...]``: where a sweep stands.

Per cell (task x model): runs done (ok), skipped, failed (with the first line of the
error), diverged, cut off (a checkpoint and no record: resumed by ``resume=true``), started
(a run directory with neither: still running, or killed before its first checkpoint) and
missing; the time spent and an estimate of what is left (the cell's mean time per finished
run, else the sweep's, times the runs left; a cut-off run counts for its epochs left).

The runs the sweep should have come from the overrides given, as one would give them to
``python train.py -m``, or, without any, from the ``multirun.yaml`` Hydra wrote into the
sweep directory at its last launch. They are expanded with Hydra's own sweep parser and
resolved to identities without loading data or training; the dry run lists each run that
``train.py -m ... resume=true`` would launch and the ones already done.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf

from graphnetz.run_identity import (
    config_identity,
    config_value,
    identity_in_name,
    short_identity,
)
from graphnetz.run_record import RECORD_NAME, RecordError, RunRecord

#: States of a run, best first: an identity seen in several directories takes the best.
STATES = ("ok", "skipped", "diverged", "failed", "cut off", "started", "missing")
CHECKPOINT_NAME = "checkpoint.ckpt"  # graphnetz.training.checkpoint.CHECKPOINT_NAME


@dataclass(frozen=True)
class RunState:
    """One run as found in the sweep directory (or expected and missing)."""

    state: str
    task: str
    model: str
    seed: object
    identity: str | None  # full, short (from a directory name), or None (schema 1)
    spent_s: float = 0.0
    left_fraction: float = 1.0  # of a full run, when it is to be run (again)
    error: str | None = None
    where: str | None = None


# --------------------------------------------------------------------- the sweep dir
def found_runs(sweep: Path) -> list[RunState]:
    """Every run directory under ``sweep`` (one with a record, a checkpoint or a Hydra
    ``.hydra`` folder), as a :class:`RunState`."""
    dirs = {
        p.parent for name in (RECORD_NAME, CHECKPOINT_NAME, ".hydra") for p in sweep.rglob(name)
    }
    return [s for s in (_state_of(d) for d in sorted(dirs)) if s is not None]


def _state_of(run_dir: Path) -> RunState | None:
    where = str(run_dir)
    try:
        rec = RunRecord.read(run_dir / RECORD_NAME)
    except (OSError, RecordError):
        rec = None
    if rec is not None:
        return RunState(
            state=rec.status,
            task=str(rec.task or rec.dataset),
            model=str(rec.model),
            seed=rec.seed,
            identity=rec.run_identity(),
            spent_s=float(rec.wall_time_s or 0.0),
            left_fraction=0.0 if rec.finished else 1.0,
            error=(rec.reason or "").strip().splitlines()[0] if rec.reason else None,
            where=where,
        )
    if (run_dir / CHECKPOINT_NAME).is_file():
        return _cut_off(run_dir)
    config = _hydra_config(run_dir)
    if config is None:
        return None
    return RunState(
        state="started",
        task=f"{config_value(config, 'dataset.name')}/{config_value(config, 'task.type')}",
        model=str(config_value(config, "model.name")),
        seed=config_value(config, "seed"),
        identity=identity_in_name(run_dir.name),
        where=where,
    )


def _cut_off(run_dir: Path) -> RunState:
    from graphnetz.training.checkpoint import read_resume_state  # torch: only when needed

    saved = read_resume_state(run_dir / CHECKPOINT_NAME) or {}
    config = saved.get("config") or _hydra_config(run_dir) or {}
    epochs = config_value(config, "trainer.max_epochs")
    done = saved.get("epochs", 0)
    left = 1.0 - done / epochs if isinstance(epochs, int) and epochs > 0 else 1.0
    return RunState(
        state="cut off",
        task=f"{config_value(config, 'dataset.name')}/{config_value(config, 'task.type')}",
        model=str(config_value(config, "model.name")),
        seed=config_value(config, "seed"),
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
        return OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    except Exception:  # half-written: the directory still counts as started
        return {}


# ------------------------------------------------------------------- the expected
def sweep_overrides(sweep: Path, given: list[str]) -> list[str] | None:
    """The job overrides of the sweep: ``given`` (less Hydra's own and ``-m``), else those
    of the sweep's last launch (``multirun.yaml``), else None."""
    given = [o for o in given if o not in ("-m", "--multirun")]
    if given:
        return [o for o in given if not o.lstrip("+~").startswith(("hydra.", "hydra/"))]
    saved = sweep / "multirun.yaml"
    if not saved.is_file():
        return None
    overrides = OmegaConf.load(saved).hydra.overrides.task
    return [str(o) for o in overrides]


def expected_runs(overrides: list[str]) -> list[tuple[RunState, list[str]]]:
    """The runs ``train.py -m OVERRIDES`` launches, resolved (no data loaded), with each
    job's overrides; a job whose config cannot be resolved is expected as its failure."""
    from hydra import compose, initialize_config_dir
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from graphnetz.config_dir import CONF_DIR
    from graphnetz.training.resolve import composed_identity, resolve_run

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        first = compose("config", overrides=_first_values(overrides), return_hydra_config=True)
        params = first.hydra.sweeper.params
        params = OmegaConf.to_container(params, resolve=False) if params else {}
        arguments = [f"{k}={v}" for k, v in params.items()] + list(overrides)
        parsed = OverridesParser.create().parse_overrides(arguments)
        jobs = [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
        expected = []
        for job in jobs:
            cfg = compose("config", overrides=list(job))
            try:
                spec = resolve_run(cfg)
                state = RunState("missing", spec.task_key, spec.model, spec.seed, spec.identity)
            except Exception as err:
                task = f"{cfg.dataset.name}/{OmegaConf.select(cfg, 'task.type')}"
                identity = composed_identity(cfg)
                state = RunState(
                    "missing", task, cfg.model.name, cfg.seed, identity, error=str(err)
                )
            expected.append((state, list(job)))
    return expected


def _first_values(overrides: list[str]) -> list[str]:
    """One value of each sweep override (enough to compose the config once and read
    ``hydra.sweeper.params``, which an ``experiment`` sets)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides)
    return [
        f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}"
        if o.is_sweep_override()
        else o.input_line
        for o in parsed
    ]


# ------------------------------------------------------------------------ merging
def merge(found: Iterable[RunState], expected: Iterable[RunState]) -> list[RunState]:
    """One state per run: the best state of its identity among the directories found, and
    ``missing`` for an expected identity found nowhere."""
    best: dict[object, RunState] = {}
    spent: dict[object, float] = {}
    for run in found:
        key = _key(run)
        spent[key] = spent.get(key, 0.0) + run.spent_s
        if key not in best or STATES.index(run.state) < STATES.index(best[key].state):
            best[key] = run
    for run in expected:
        best.setdefault(_key(run), run)
    merged = []
    for key, run in best.items():
        merged.append(RunState(**{**run.__dict__, "spent_s": spent.get(key, 0.0)}))
    return merged


def _key(run: RunState) -> object:
    """The short identity (all a directory name carries); a schema-1 record its own key."""
    return short_identity(run.identity) if run.identity else ("no identity", run.where)


# ------------------------------------------------------------------------ report
def cell_table(runs: list[RunState], with_missing: bool) -> list[str]:
    """Per (task, model) the count of each state, time spent and estimated left."""
    cells: dict[tuple[str, str], list[RunState]] = {}
    for run in runs:
        cells.setdefault((run.task, run.model), []).append(run)
    ok_times = [r.spent_s for r in runs if r.state == "ok" and r.spent_s > 0]
    overall = sum(ok_times) / len(ok_times) if ok_times else math.nan
    shown = [s for s in STATES if with_missing or s != "missing"]
    header = ["task", "model", *(s.replace(" ", "-") for s in shown), "spent", "left(est.)"]
    rows = []
    for (task, model), members in cells.items():
        times = [r.spent_s for r in members if r.state == "ok" and r.spent_s > 0]
        per_run = sum(times) / len(times) if times else overall
        left = sum(
            r.left_fraction
            for r in members
            if r.state in ("failed", "cut off", "started", "missing")
        )
        rows.append(
            [
                task,
                model,
                *(str(sum(r.state == s for r in members)) for s in shown),
                duration(sum(r.spent_s for r in members)),
                duration(left * per_run) if left else "0s",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    return [
        "  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *rows]
    ]


def duration(seconds: float) -> str:
    if math.isnan(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}min"
    return f"{seconds / 3600:.1f}h"


def render(sweep: Path, overrides: list[str] | None) -> str:
    found = found_runs(sweep)
    expected = expected_runs(overrides) if overrides is not None else []
    runs = merge(found, [state for state, _ in expected])
    lines = [f"sweep {sweep}: {len(runs)} runs"]
    if overrides is None:
        lines.append("(no overrides and no multirun.yaml: missing runs are not known)")
    lines += ["", *cell_table(runs, with_missing=overrides is not None)]
    failed = [r for r in runs if r.state in ("failed", "diverged") and r.error]
    if failed:
        lines += ["", "failed and diverged:"]
        lines += [f"  {r.task} {r.model} seed={r.seed}: {r.error}  ({r.where})" for r in failed]
    if overrides is not None:
        lines += ["", *dry_run(runs, expected, overrides)]
    return "\n".join(lines)


def dry_run(
    runs: list[RunState], expected: list[tuple[RunState, list[str]]], overrides
) -> list[str]:
    """What ``train.py -m OVERRIDES resume=true`` into this sweep directory would do."""
    state = {_key(r): r.state for r in runs}

    def state_of(run: RunState) -> str:
        return state.get(_key(run), "missing")

    done = [(r, job) for r, job in expected if state_of(r) in ("ok", "skipped", "diverged")]
    todo = [(r, job) for r, job in expected if (r, job) not in done]
    command = " ".join([*(o for o in overrides if not o.startswith("resume=")), "resume=true"])
    lines = [
        f"dry run of `train.py -m {command}`: {len(expected)} runs, "
        f"{len(done)} already done, {len(todo)} to run",
    ]
    for run, job in todo:
        lines.append(
            f"  run  [{state_of(run)}] {run.task} {run.model} seed={run.seed}: {' '.join(job)}"
        )
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz status",
        description=__doc__.split("\n\n")[0].strip("`"),
    )
    parser.add_argument("sweep", metavar="SWEEP_DIR", help="a sweep's hydra.sweep.dir")
    parser.add_argument(
        "overrides",
        nargs=argparse.REMAINDER,
        metavar="OVERRIDES",
        help="the sweep's overrides, as given to train.py -m (default: its multirun.yaml)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    sweep = Path(args.sweep)
    if not sweep.is_dir():
        what = "is a file, not a folder" if sweep.exists() else "does not exist"
        parser.exit(2, f"error: sweep directory {str(sweep)!r} {what}\n")
    try:
        print(render(sweep, sweep_overrides(sweep, args.overrides)))
    except Exception as err:  # a bad override: say which, no traceback
        parser.exit(2, f"error: {type(err).__name__}: {err}\n")
    return 0
