"""Keep a sweep's finished run records in a compact folder that outlives the sweep folder.

A sweep folder holds checkpoints, logs and Hydra's files beside each run's ``result.json``;
only the record decides what a resumed sweep skips and what the report reads. ``save``
copies every *finished* record (ok, skipped, diverged) of a sweep folder, byte for byte,
into ``<archive>/<run directory relative to the sweep>.json.xz``; ``restore`` writes them
back as ``<sweep>/<run directory>/result.json``. An archive is small enough to commit (an
``ml_real`` record is about 50 kB compressed) or copy, so a multi-session sweep restored
from it and run again with ``resume=true`` starts where the last session stopped, and the
tables generated from it can be regenerated from a clean checkout.

Both directions add and never replace: a record already there with the same bytes is
counted as present; one there with different bytes is a *conflict*, left as it is and
reported (a finished result is never overwritten or merged with another run's).
Failed and half-written records are not archived: a resumed sweep runs them again.
"""

from __future__ import annotations

import json
import lzma
from dataclasses import dataclass, field
from pathlib import Path

from graphnetz.atomic import write_atomic
from graphnetz.run_record import RECORD_NAME, RecordError, RunRecord

ARCHIVE_SUFFIX = ".json.xz"


@dataclass
class Transfer:
    """What one ``save`` or ``restore`` did, record by record (paths relative to the sweep)."""

    written: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    not_finished: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)

    def summary(self, verb: str) -> str:
        parts = [f"{len(self.written)} {verb}", f"{len(self.present)} already there"]
        for name, items in (
            ("conflicting (kept as they were)", self.conflicts),
            ("not finished (not archived)", self.not_finished),
            ("unreadable (skipped)", self.unreadable),
        ):
            if items:
                parts.append(f"{len(items)} {name}: {', '.join(items[:5])}")
                if len(items) > 5:
                    parts[-1] += f", ... ({len(items) - 5} more)"
        return "; ".join(parts)


def save_records(sweep_dir: str | Path, archive_dir: str | Path) -> Transfer:
    """Archive every finished record under ``sweep_dir`` into ``archive_dir``."""
    sweep_dir, archive_dir = Path(sweep_dir), Path(archive_dir)
    if not sweep_dir.is_dir():
        raise FileNotFoundError(f"sweep folder {str(sweep_dir)!r} does not exist")
    done = Transfer()
    for path in sorted(sweep_dir.rglob(RECORD_NAME)):
        name = path.parent.relative_to(sweep_dir).as_posix()
        raw = path.read_bytes()
        try:
            record = _parse(raw)
        except RecordError:
            done.unreadable.append(name)
            continue
        if not record.finished:
            done.not_finished.append(name)
            continue
        _place(archive_dir / f"{name}{ARCHIVE_SUFFIX}", raw, name, done, compress=True)
    return done


def restore_records(archive_dir: str | Path, sweep_dir: str | Path) -> Transfer:
    """Write every archived record back into ``sweep_dir`` as ``<run dir>/result.json``."""
    archive_dir, sweep_dir = Path(archive_dir), Path(sweep_dir)
    if not archive_dir.is_dir():
        raise FileNotFoundError(f"record archive {str(archive_dir)!r} does not exist")
    done = Transfer()
    for path in sorted(archive_dir.rglob(f"*{ARCHIVE_SUFFIX}")):
        name = path.relative_to(archive_dir).as_posix()[: -len(ARCHIVE_SUFFIX)]
        try:
            raw = lzma.decompress(path.read_bytes())
            _parse(raw)
        except (lzma.LZMAError, RecordError):
            done.unreadable.append(name)
            continue
        _place(sweep_dir / name / RECORD_NAME, raw, name, done, compress=False)
    return done


def _parse(raw: bytes) -> RunRecord:
    try:
        return RunRecord.from_dict(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RecordError(f"{type(err).__name__}: {err}") from err


def _place(target: Path, raw: bytes, name: str, done: Transfer, compress: bool) -> None:
    if target.exists():
        there = target.read_bytes()
        try:
            same = (lzma.decompress(there) if compress else there) == raw
        except lzma.LZMAError:
            same = False
        (done.present if same else done.conflicts).append(name)
        return
    payload = lzma.compress(raw, preset=9) if compress else raw
    write_atomic(target, lambda fh: fh.write(payload), "wb")
    done.written.append(name)
