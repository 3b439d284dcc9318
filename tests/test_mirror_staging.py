"""Staging raw files from a read-only mirror into our data directory (graphnetz.data.mirror)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from graphnetz.data import integrity as staging_module
from graphnetz.data.mirror import (
    MIRROR_ENV,
    DatasetUnavailableError,
    build_from_mirror,
    resolve_mirror,
    stage_files,
)

FILES = ["a.txt", "b.txt", "sub/c.txt"]


def make_mirror(root: Path, files=FILES) -> Path:
    for name in files:
        path = root / "Set" / "raw" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"mirror copy of {name}")
    return root


def test_a_complete_mirror_is_staged_file_by_file(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "raw"
    assert stage_files(mirror, "Set/raw", target, FILES, "Set") is True
    for name in FILES:
        assert (target / name).read_text() == f"mirror copy of {name}"


def test_a_partial_mirror_stages_nothing_and_says_so(tmp_path):
    mirror = make_mirror(tmp_path / "mirror", files=["a.txt", "b.txt"])  # sub/c.txt missing
    target = tmp_path / "data" / "raw"
    assert stage_files(mirror, "Set/raw", target, FILES, "Set") is False
    assert not target.exists() or not any(target.rglob("*"))  # no half-staged dataset


def test_a_partial_mirror_with_a_failing_download_names_dataset_and_files(tmp_path):
    mirror = make_mirror(tmp_path / "mirror", files=["a.txt"])

    def download():
        raise OSError("network unreachable")

    with pytest.raises(DatasetUnavailableError) as info:
        build_from_mirror("Set", mirror, "Set/raw", tmp_path / "data", FILES, download)
    message = str(info.value)
    assert "'Set'" in message and "sub/c.txt" in message
    assert str(mirror / "Set" / "raw") in message and "network unreachable" in message


def test_already_staged_files_are_left_alone(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "raw"
    target.mkdir(parents=True)
    (target / "a.txt").write_text("our own copy")
    os.utime(target / "a.txt", ns=(1_000_000_000, 1_000_000_000))
    assert stage_files(mirror, "Set/raw", target, FILES, "Set") is True
    assert (target / "a.txt").read_text() == "our own copy"
    assert (target / "a.txt").stat().st_mtime_ns == 1_000_000_000
    assert (target / "b.txt").read_text() == "mirror copy of b.txt"  # the missing ones copied


def test_fully_staged_files_need_no_mirror(tmp_path):
    target = tmp_path / "raw"
    for name in FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_text("staged")
    assert stage_files(None, "Set/raw", target, FILES, "Set") is True


def test_no_mirror_and_nothing_staged_means_download(tmp_path):
    assert stage_files(None, "Set/raw", tmp_path / "raw", FILES, "Set") is False


def test_a_file_is_copied_under_a_temporary_name_and_then_renamed(tmp_path, monkeypatch):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "raw"
    real_copy = shutil.copyfile
    seen = []

    def watching_copy(src, dst):
        final = target / Path(src).relative_to(mirror / "Set" / "raw")
        seen.append((Path(dst), final, final.exists()))
        return real_copy(src, dst)

    monkeypatch.setattr(staging_module.shutil, "copyfile", watching_copy)
    stage_files(mirror, "Set/raw", target, FILES, "Set")
    assert len(seen) == len(FILES)
    for written, final, final_existed in seen:
        assert written != final and written.parent == final.parent
        assert not final_existed  # the final name appears only once the copy is complete
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*.txt")) == FILES
    assert [p for p in target.rglob("*") if p.is_file() and p.suffix != ".txt"] == []


def test_an_interrupted_copy_never_leaves_a_half_file_under_the_real_name(tmp_path, monkeypatch):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "raw"
    real_copy = shutil.copyfile

    def failing_copy(src, dst):
        Path(dst).write_text("mirror co")  # half the bytes, then the disk fills up
        raise OSError("No space left on device")

    monkeypatch.setattr(staging_module.shutil, "copyfile", failing_copy)
    with pytest.raises(OSError, match="No space left"):
        stage_files(mirror, "Set/raw", target, FILES, "Set")
    assert not (target / "a.txt").exists()
    # the next attempt stages every file completely
    monkeypatch.setattr(staging_module.shutil, "copyfile", real_copy)
    assert stage_files(mirror, "Set/raw", target, FILES, "Set") is True
    assert (target / "a.txt").read_text() == "mirror copy of a.txt"


def test_the_mirror_is_only_read_and_its_permissions_are_not_copied(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    sources = [mirror / "Set" / "raw" / name for name in FILES]
    for path in sources:
        path.chmod(0o444)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sources}
    target = tmp_path / "data" / "raw"
    stage_files(mirror, "Set/raw", target, FILES, "Set")
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in sources} == before
    assert (target / "a.txt").stat().st_mode & 0o200  # our copy stays writable by us


def test_resolve_mirror_prefers_the_argument_then_the_environment(tmp_path, monkeypatch):
    (tmp_path / "arg").mkdir()
    (tmp_path / "env").mkdir()
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "env"))
    assert resolve_mirror(tmp_path / "arg") == (tmp_path / "arg").resolve()
    assert resolve_mirror(None) == (tmp_path / "env").resolve()
    assert resolve_mirror("") == (tmp_path / "env").resolve()
    monkeypatch.delenv(MIRROR_ENV)
    assert resolve_mirror(None) is None


def test_a_mirror_that_is_not_a_folder_is_refused_with_the_setting_to_fix(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError) as info:
        resolve_mirror(missing)
    assert str(missing) in str(info.value) and "paths.data_mirror" in str(info.value)
