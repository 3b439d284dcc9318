"""The Hydra callback of every graphnetz sweep (``conf/hydra/default.yaml``).

- **job start** (in the job's process, whatever the launcher): one torch thread per job
  under a parallel pool or joblib launcher (:func:`graphnetz.sweep.threads.default_threads`);
- **job end**: one line appended to the sweep's event file ``.sweep_events.jsonl``
  (the job's run directory and when it started); appends of one short line are atomic,
  so parallel jobs and other hosts' jobs never garble it;
- **sweep start** (in the launching process): a thread follows the event file and shows
  the sweep's progress (:mod:`graphnetz.sweep.progress`): runs done / total, failed,
  elapsed, ETA;
- **sweep end**: one summary line, statuses read from the records on disk
  (``ok / failed / diverged / skipped``, any other status after them), and exit status 1
  when no run of the sweep succeeded (or it has none: an override that sweeps no value,
  ``seed=range(0)``, is named).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from hydra.types import RunMode
from omegaconf import DictConfig

from graphnetz.run_record import RECORD_NAME
from graphnetz.sweep.jobs import job_count
from graphnetz.sweep.pool import FORK_LOCK
from graphnetz.sweep.progress import ProgressDisplay, SweepTally
from graphnetz.sweep.threads import default_threads

EVENTS_NAME = ".sweep_events.jsonl"
#: Names this launch's events, so two sweeps writing into one folder count only their own.
TOKEN_ENV = "GRAPHNETZ_SWEEP_TOKEN"
EVENTS_ENV = "GRAPHNETZ_SWEEP_EVENTS"


def append_event(path: Path, event: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(event) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read_events(path: Path, token: str | None) -> list[dict[str, Any]]:
    """The complete event lines of ``path`` written under ``token`` (all when None)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    events = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line being written right now
        if isinstance(event, dict) and (token is None or event.get("token") == token):
            events.append(event)
    return events


def record_status(run_dir: str | os.PathLike) -> str:
    """The ``status`` of the run record in ``run_dir`` as written, whatever it is (a
    status this version does not know is shown as it is); ``no record`` when there is
    none or it cannot be read."""
    try:
        raw = json.loads((Path(run_dir) / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "no record"
    status = raw.get("status") if isinstance(raw, dict) else None
    return str(status) if status else "no record"


def tally_of(events: list[dict[str, Any]], total: int | None) -> SweepTally:
    """One count per record directory (a job requeued twice counts once, as its last end)."""
    tally = SweepTally(total)
    last = {str(e.get("record_dir") or e.get("run_dir")): e for e in events}
    for run_dir, event in last.items():
        reused = _mtime(Path(run_dir) / RECORD_NAME) < float(event.get("started", 0))
        tally.add(record_status(run_dir), reused=reused)
    return tally


def _job_count(config: DictConfig) -> int | None:
    """:func:`graphnetz.sweep.jobs.job_count` with Hydra's config loader (a glob sweep,
    ``model=glob(gc*)``, needs it); None (progress without a total) when the jobs cannot
    be counted, so the sweep keeps its progress and summary."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    hydra = GlobalHydra.instance()
    try:
        return job_count(config, hydra.config_loader() if hydra.is_initialized() else None)
    except HydraException as err:
        print(f"sweep progress: the jobs cannot be counted ({err})", file=sys.stderr, flush=True)
        return None


def _empty_overrides(config: DictConfig) -> list[str]:
    """The sweep overrides of ``config`` that sweep no value (``seed=range(0)``); [] when
    none does or they cannot be parsed."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    from graphnetz.sweep.jobs import sweep_overrides

    hydra = GlobalHydra.instance()
    try:
        parser = OverridesParser.create(hydra.config_loader() if hydra.is_initialized() else None)
        parsed = parser.parse_overrides(sweep_overrides(config))
        return [
            o.input_line
            for o in parsed
            if o.is_sweep_override() and next(iter(o.sweep_string_iterator()), None) is None
        ]
    except (HydraException, ValueError, TypeError, AttributeError):
        return []


def _no_runs(config: DictConfig) -> str:
    """Why a sweep of no jobs failed, naming the override that sweeps no value."""
    empty = _empty_overrides(config)
    if not empty:
        return "sweep failed: the sweep has no runs"
    which = ", ".join(repr(o) for o in empty)
    verb = "sweep" if len(empty) > 1 else "sweeps"
    return f"sweep failed: the sweep has no runs (the override {which} {verb} no value)"


def _record_dir_of_the_job() -> Path | None:
    """Where the run of the job that just ended left its record (None: no run did)."""
    import sys

    run = sys.modules.get("graphnetz.training.run")  # no run in this process: no record
    return run.take_record_dir() if run is not None else None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return float("inf")


class SweepCallback(Callback):
    """See the module docstring; ``progress_every_s`` spaces the progress lines written
    to a file (a terminal gets a live bar)."""

    def __init__(self, progress_every_s: float = 30.0, poll_s: float = 1.0) -> None:
        self.progress_every_s, self.poll_s = float(progress_every_s), float(poll_s)
        self._job_started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Launchers pickle the callbacks into every job: the launcher's progress thread
        and display stay behind."""
        return {"progress_every_s": self.progress_every_s, "poll_s": self.poll_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    # ----------------------------------------------------------------- in the job
    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        self._job_started = time.time()
        _record_dir_of_the_job()  # forget an earlier job's
        threads = default_threads(config)
        if threads is not None:
            import torch

            from graphnetz.training.threads import cap_threads

            cap_threads(threads)  # a large graph's thread choice must not undo it
            torch.set_num_threads(threads)

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        if config.hydra.mode != RunMode.MULTIRUN:
            return
        run_dir = str(config.hydra.runtime.output_dir)
        events = os.environ.get(EVENTS_ENV) or str(Path(config.hydra.sweep.dir) / EVENTS_NAME)
        record_dir = _record_dir_of_the_job()
        event = {
            "token": os.environ.get(TOKEN_ENV),
            "job": int(config.hydra.job.num),
            "run_dir": run_dir,
            # where the job's record is: another folder when its folder held another
            # run's record, or when it was found finished elsewhere (resume=true)
            "record_dir": str(record_dir) if record_dir is not None else run_dir,
            "started": self._job_started,
            "ended": time.time(),
        }
        append_event(Path(events), event)

    # ----------------------------------------------------------------- in the launcher
    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        self.token = uuid.uuid4().hex
        self.events = Path(str(config.hydra.sweep.dir)).absolute() / EVENTS_NAME
        os.environ[TOKEN_ENV], os.environ[EVENTS_ENV] = self.token, str(self.events)
        self.total = _job_count(config)
        self.display = ProgressDisplay(self.total, self.progress_every_s)
        self._thread = threading.Thread(target=self._follow, name="sweep-progress", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        while not self._stop.wait(self.poll_s):
            tally = tally_of(read_events(self.events, self.token), self.total)
            with FORK_LOCK:  # never mid-write when the pool launcher forks (sweep/pool.py)
                try:
                    self.display.show(tally)
                except Exception as err:  # a display problem must never stop the sweep
                    print(f"sweep progress stopped: {err}", file=sys.stderr, flush=True)
                    return

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        tally = tally_of(read_events(self.events, self.token), self.total)
        self.display.show(tally, final=True)
        missing = (self.total or 0) - tally.done
        if missing > 0:
            tally.statuses["no record"] += missing  # a job that ended without its callback
        print(
            f"sweep summary: {tally.summary()}; records in {self.events.parent}",
            file=sys.stderr,
            flush=True,
        )
        if self.total == 0:
            print(_no_runs(config), file=sys.stderr, flush=True)
            raise SystemExit(1)
        if tally.statuses["ok"] == 0:
            print("sweep failed: no run succeeded", file=sys.stderr, flush=True)
            raise SystemExit(1)
