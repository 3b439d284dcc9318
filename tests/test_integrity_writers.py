"""Every writer has temporary files of its own, and what it leaves honours the umask."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from report_fixtures import make_records  # noqa: E402

from graphnetz.atomic import create_temp, save_figure, temp_files_of, write_text  # noqa: E402
from graphnetz.data import integrity  # noqa: E402
from graphnetz.data.mirror import stage_files  # noqa: E402
from graphnetz.report import BenchmarkReport  # noqa: E402
from graphnetz.run_record import RunRecord  # noqa: E402
from graphnetz.training.checkpoint import (  # noqa: E402
    CHECKPOINT_NAME,
    PeriodicCheckpoint,
    discard_checkpoint,
)


@contextmanager
def umask(mask: int):
    before = os.umask(mask)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


class FakeTrainer:
    """What PeriodicCheckpoint asks of a Lightning trainer; ``during_save`` runs halfway
    through writing the file (another writer, say), as a slow save would let it."""

    should_stop = False

    def __init__(self, content: bytes, during_save=None) -> None:
        self.content, self.during_save = content, during_save

    def save_checkpoint(self, path) -> None:
        with open(path, "wb") as fh:  # Lightning opens the path it is given and writes it
            fh.write(self.content[:10])
            fh.flush()
            if self.during_save is not None:
                self.during_save()
            fh.write(self.content[10:])


def checkpoint_writer(run_dir: Path) -> PeriodicCheckpoint:
    return PeriodicCheckpoint(run_dir / CHECKPOINT_NAME, 0, {}, None, started=0.0)


# ------------------------------------------------------------------ unique temp names
def test_two_writers_saving_one_checkpoint_at_once_do_not_clash(tmp_path):
    """Two sweeps sharing a folder: one saves while the other's save is under way."""
    first, second = checkpoint_writer(tmp_path), checkpoint_writer(tmp_path)
    other = FakeTrainer(b"second writer's checkpoint")
    first_trainer = FakeTrainer(
        b"first writer's checkpoint", lambda: second.on_train_epoch_end(other, None)
    )
    first.on_train_epoch_end(first_trainer, None)  # a shared temp name: FileNotFoundError
    assert (tmp_path / CHECKPOINT_NAME).read_bytes() == b"first writer's checkpoint"
    assert temp_files_of(tmp_path / CHECKPOINT_NAME) == []


def test_two_processes_staging_one_file_at_once_do_not_clash(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "Set" / "raw").mkdir(parents=True)
    (mirror / "Set" / "raw" / "a.txt").write_text("alpha\n" * 100)
    target = tmp_path / "data" / "Set" / "raw"
    real_copy = shutil.copyfile
    calls = []

    def copy_interleaved(src, dst):
        calls.append(dst)
        real_copy(src, dst)
        if len(calls) == 1:  # the other writer stages the same file before this one renames
            stage_files(mirror, "Set/raw", target, ["a.txt"], "Set")

    monkeypatch.setattr(integrity.shutil, "copyfile", copy_interleaved)
    assert stage_files(mirror, "Set/raw", target, ["a.txt"], "Set") is True
    assert len(set(map(str, calls))) == 2  # each writer its own temporary file
    assert (target / "a.txt").read_text() == "alpha\n" * 100
    assert temp_files_of(target / "a.txt") == []


def test_finishing_a_run_removes_only_the_temp_files_of_ended_processes(tmp_path):
    path = tmp_path / CHECKPOINT_NAME
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(ended.stdout)
    fd, live = create_temp(path)  # this process: still writing it
    os.close(fd)
    dead = Path(str(live).replace(f".tmp-{os.getpid()}@", f".tmp-{dead_pid}@"))
    dead.write_bytes(b"cut off mid-save")
    legacy = tmp_path / (CHECKPOINT_NAME + ".tmp")  # the fixed name of earlier versions
    legacy.write_bytes(b"old")
    path.write_bytes(b"checkpoint")
    discard_checkpoint(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name]


# ------------------------------------------------------------------ the umask
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_records_texts_figures_checkpoints_and_staged_files_honour_the_umask(
    tmp_path, mask, expected
):
    mirror = tmp_path / "mirror"
    (mirror / "Set" / "raw").mkdir(parents=True)
    (mirror / "Set" / "raw" / "a.txt").write_text("alpha")
    (mirror / "Set" / "raw" / "a.txt").chmod(0o400)  # the mirror's mode is not copied
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    with umask(mask):
        written = [
            RunRecord(status="skipped", reason="test").write(tmp_path / "run"),
            write_text(tmp_path / "report.md", "# report\n"),
            save_figure(fig, tmp_path / "figure.png"),
        ]
        checkpoint_writer(tmp_path / "run").on_train_epoch_end(FakeTrainer(b"x" * 20), None)
        written.append(tmp_path / "run" / CHECKPOINT_NAME)
        stage_files(mirror, "Set/raw", tmp_path / "data" / "raw", ["a.txt"], "Set")
        written += [
            tmp_path / "data" / "raw" / "a.txt",
            integrity.stamp_path(tmp_path / "data" / "raw"),
        ]
    plt.close(fig)
    assert {p.name: oct(mode(p)) for p in written} == {p.name: oct(expected) for p in written}


def test_a_written_report_is_readable_by_the_group_and_others_under_umask_022(tmp_path):
    report = BenchmarkReport.from_records(make_records())
    with umask(0o022):
        report.write(tmp_path / "report")
    files = [p for p in (tmp_path / "report").rglob("*") if p.is_file()]
    assert len(files) > 10 and {"report.md", "report.json", "cd_diagram.pdf"} <= {
        p.name for p in files
    }
    assert {p.relative_to(tmp_path).as_posix(): oct(mode(p)) for p in files} == {
        p.relative_to(tmp_path).as_posix(): "0o644" for p in files
    }


def test_tight_bbox_once_gives_the_tight_png_and_leaves_constrained_figures_alone(tmp_path):
    """The box computed once for all formats crops a PNG exactly as "tight" does."""
    from matplotlib.figure import Figure
    from PIL import Image

    from graphnetz.atomic import tight_bbox

    fig, axes = plt.subplots(1, 2, figsize=(5, 3))
    for ax in axes:
        ax.errorbar(range(5), range(5), yerr=0.5, fmt="o", label="a long legend label")
        ax.set_title("a title")
        ax.set_ylabel("accuracy")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # outside the axes
    fig.tight_layout()
    tight = save_figure(fig, tmp_path / "tight.png")
    once = save_figure(fig, tmp_path / "once.png", tight_bbox(fig))
    a, b = (np.asarray(Image.open(p)) for p in (tight, once))
    assert a.shape == b.shape and np.array_equal(a, b)
    plt.close(fig)
    assert tight_bbox(Figure(layout="constrained")) == "tight"
