"""What a sweep has done so far, as one line: runs done / total, failed, elapsed, ETA.

:class:`SweepTally` counts finished jobs; :func:`progress_line` renders it. The display
(:class:`ProgressDisplay`) draws a tqdm bar on a terminal and, when the output is a file
(a Slurm log, ``> sweep.log``), writes plain lines instead, at most one every
``every_s`` seconds plus the last one, so a log stays readable.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from tqdm import tqdm

#: Statuses that count as a failure in the progress line (the summary lists every status).
FAILURE_STATUSES = ("failed", "diverged", "crashed", "no record")


@dataclass
class SweepTally:
    """Finished jobs of one sweep: ``statuses`` counts each record status; ``reused``
    counts jobs whose complete record came from an earlier sweep (``resume=true``)."""

    total: int | None
    statuses: Counter = field(default_factory=Counter)
    reused: int = 0

    def add(self, status: str, reused: bool = False) -> None:
        self.statuses[status] += 1
        self.reused += bool(reused)

    @property
    def done(self) -> int:
        return sum(self.statuses.values())

    @property
    def failed(self) -> int:
        return sum(self.statuses[s] for s in FAILURE_STATUSES)

    def eta_s(self, elapsed_s: float) -> float | None:
        """Seconds left at the pace of this sweep's own runs (reused records cost
        nothing, so they do not speed the estimate up); None before one run finished."""
        trained = self.done - self.reused
        if self.total is None or trained <= 0:
            return None
        return elapsed_s / trained * max(self.total - self.done, 0)

    def summary(self) -> str:
        """``ok 6, failed 1, diverged 1, skipped 0``: the four statuses always, any other
        status a record may carry after them."""
        names = ["ok", "failed", "diverged", "skipped"]
        names += sorted(s for s in self.statuses if s not in names)
        parts = [f"{name} {self.statuses[name]}" for name in names]
        reused = f" ({self.reused} reused from an earlier sweep)" if self.reused else ""
        return ", ".join(parts) + reused


def clock(seconds: float | None) -> str:
    """``h:mm:ss`` (``?`` when unknown)."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def progress_line(tally: SweepTally, elapsed_s: float) -> str:
    total = "?" if tally.total is None else tally.total
    return (
        f"sweep: {tally.done}/{total} runs done, {tally.failed} failed, "
        f"elapsed {clock(elapsed_s)}, ETA {clock(tally.eta_s(elapsed_s))}"
    )


class ProgressDisplay:
    """Shows a :class:`SweepTally` on ``stream`` (stderr by default)."""

    def __init__(self, total: int | None, every_s: float = 30.0, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.every_s = float(every_s)
        self.started = time.monotonic()
        self._last_line = float("-inf")
        self._shown = (-1, -1)
        self.bar = None
        if self.stream.isatty():
            self.bar = tqdm(total=total, file=self.stream, unit="run", desc="sweep")

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def show(self, tally: SweepTally, final: bool = False) -> None:
        if self.bar is not None:
            self.bar.n = tally.done
            self.bar.set_postfix(failed=tally.failed, refresh=False)
            self.bar.refresh()
            if final:
                self.bar.close()
            return
        now = time.monotonic()
        changed = (tally.done, tally.failed) != self._shown
        if changed and (final or now - self._last_line >= self.every_s):
            print(progress_line(tally, self.elapsed_s()), file=self.stream, flush=True)
            self._last_line, self._shown = now, (tally.done, tally.failed)
