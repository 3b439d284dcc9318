"""Staged mirror files are verified and follow the mirror (graphnetz.data.integrity).

The Cora tests reproduce the damaged-mirror case of issue 14 on a private copy of the
mirror's Cora files (the shared mirror is only read).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from graphnetz.config_dir import CONF_DIR
from graphnetz.data.integrity import (
    SUMS_NAME,
    CorruptDataError,
    file_sha256,
    read_checksums,
    stamp_path,
)
from graphnetz.data.loading import clear_cache
from graphnetz.data.mirror import build_from_mirror, stage_files
from graphnetz.training.run import run_experiment

FILES = ["a.txt", "sub/b.txt"]
CORA_INDEX = "Planetoid/Cora/raw/ind.cora.test.index"


def make_mirror(root: Path, with_sums: bool = True, **contents: str) -> Path:
    """A mirror ``root/Set/raw/{a.txt,sub/b.txt}`` (+ SHA256SUMS of what it holds)."""
    texts = {"a.txt": "alpha\n" * 50, "sub/b.txt": "beta\n" * 70, **contents}
    lines = []
    for name, text in texts.items():
        path = root / "Set" / "raw" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        lines.append(f"{hashlib.sha256(text.encode()).hexdigest()}  ./Set/raw/{name}")
    if with_sums:
        (root / SUMS_NAME).write_text("\n".join(lines) + "\n")
    return root


def stage(mirror, target):
    return stage_files(mirror, "Set/raw", target, FILES, "Set")


def later(path: Path) -> None:
    """Give ``path`` a modification time clearly after its current one (coarse clocks)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


# ------------------------------------------------------------------ checksums
def test_a_file_that_contradicts_the_mirrors_checksum_is_refused_by_name(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    (mirror / "Set" / "raw" / "sub" / "b.txt").write_text("beta\n" * 20)  # cut short
    target = tmp_path / "data" / "Set" / "raw"
    with pytest.raises(CorruptDataError) as info:
        stage(mirror, target)
    message = str(info.value)
    assert str(mirror / "Set" / "raw" / "sub" / "b.txt") in message
    assert str(mirror / SUMS_NAME) in message and "100 bytes" in message
    assert not (target / "sub" / "b.txt").exists()  # nothing staged under its name
    assert [p.name for p in (target / "sub").iterdir()] == []  # nor a temporary file left


def test_a_mirror_without_checksums_is_staged_with_its_sizes_checked(tmp_path, monkeypatch):
    mirror = make_mirror(tmp_path / "mirror", with_sums=False)
    target = tmp_path / "data" / "Set" / "raw"
    from graphnetz.data import integrity

    real_copy = shutil.copyfile

    def short_copy(src, dst):  # the disk fills up: the copy is short, without an error
        real_copy(src, dst)
        with open(dst, "r+b") as fh:
            fh.truncate(10)

    monkeypatch.setattr(integrity.shutil, "copyfile", short_copy)
    with pytest.raises(CorruptDataError, match=r"gave 10 bytes, the source has 300"):
        stage(mirror, target)
    assert not (target / "a.txt").exists()
    monkeypatch.setattr(integrity.shutil, "copyfile", real_copy)
    assert stage(mirror, target) is True
    assert (target / "a.txt").read_text() == "alpha\n" * 50


def test_a_malformed_checksum_line_is_named(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    with open(mirror / SUMS_NAME, "a") as fh:
        fh.write("not-a-digest ./Set/raw/a.txt\n")
    with pytest.raises(CorruptDataError, match=r"SHA256SUMS, line 3: 'not-a-digest"):
        stage(mirror, tmp_path / "data" / "Set" / "raw")


def test_the_shipped_checksums_agree_with_sha256sum(mirror):
    """Our parser and hash against coreutils' ``sha256sum --check`` on the real mirror."""
    sums = read_checksums(mirror)
    assert len(sums) > 100 and CORA_INDEX in sums
    assert file_sha256(mirror / CORA_INDEX) == sums[CORA_INDEX]
    if shutil.which("sha256sum") is None:
        pytest.skip("coreutils sha256sum not installed")
    cora = [f"{v}  ./{k}" for k, v in sums.items() if k.startswith("Planetoid/Cora/")]
    assert len(cora) == 8
    checked = subprocess.run(
        ["sha256sum", "--check", "--strict", "-"],
        input="\n".join(cora) + "\n",
        cwd=mirror,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


# ------------------------------------------------------------------ following the mirror
def test_a_repaired_mirror_file_replaces_its_staged_copy_and_the_processed_data(tmp_path):
    mirror = make_mirror(tmp_path / "mirror", with_sums=False, **{"a.txt": "damaged\n"})
    target = tmp_path / "data" / "Set" / "raw"
    assert stage(mirror, target) is True
    processed = tmp_path / "data" / "Set" / "processed"
    processed.mkdir()
    (processed / "data.pt").write_text("built from the damaged copy")
    (mirror / "Set" / "raw" / "a.txt").write_text("alpha\n" * 50)  # repaired
    later(mirror / "Set" / "raw" / "a.txt")
    assert stage(mirror, target) is True
    assert (target / "a.txt").read_text() == "alpha\n" * 50
    assert not processed.exists()  # torch_geometric rebuilds it from the repaired file
    stamp = json.loads(stamp_path(target).read_text())["files"]
    assert stamp["a.txt"]["sha256"] == file_sha256(target / "a.txt")


def test_a_touched_but_unchanged_source_keeps_the_staged_and_processed_data(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "Set" / "raw"
    stage(mirror, target)
    processed = tmp_path / "data" / "Set" / "processed"
    processed.mkdir()
    staged_mtime = (target / "a.txt").stat().st_mtime_ns
    later(mirror / "Set" / "raw" / "a.txt")  # e.g. the mirror copied again, same bytes
    assert stage(mirror, target) is True
    assert processed.is_dir() and (target / "a.txt").stat().st_mtime_ns == staged_mtime


def test_staging_a_dataset_for_the_first_time_keeps_the_processed_data_beside_it(tmp_path):
    """MLGNC keeps every dataset's cache in one ``MLGNC/processed``: a first staging of
    another dataset's files must not throw those away."""
    mirror = make_mirror(tmp_path / "mirror")
    processed = tmp_path / "data" / "Set" / "processed"
    processed.mkdir(parents=True)
    (processed / "other.pt").write_text("another dataset's cache")
    assert stage(mirror, tmp_path / "data" / "Set" / "raw") is True
    assert (processed / "other.pt").is_file()


def test_a_changed_file_outside_a_raw_folder_removes_no_other_datasets_processed_data(tmp_path):
    """Staged into ``<data>/Set`` (not a ``raw`` folder, as MLGNC's and OGB's files are):
    only that folder's own ``processed`` is rebuilt, never a sibling dataset's."""
    mirror = make_mirror(tmp_path / "mirror", with_sums=False)
    target = tmp_path / "data" / "Set"

    def stage_set():
        return stage_files(mirror, "Set/raw", target, FILES, "Set")

    assert stage_set() is True
    others = [tmp_path / "data" / name / "processed" for name in ("Cora", "MLGNC")]
    own = target / "processed"
    for folder in (*others, own):
        folder.mkdir(parents=True, exist_ok=True)
    (mirror / "Set" / "raw" / "a.txt").write_text("changed\n" * 9)
    later(mirror / "Set" / "raw" / "a.txt")
    assert stage_set() is True
    assert all(folder.is_dir() for folder in others) and not own.exists()


def test_a_staged_copy_altered_after_staging_is_staged_again(tmp_path):
    mirror = make_mirror(tmp_path / "mirror", with_sums=False)
    target = tmp_path / "data" / "Set" / "raw"
    stage(mirror, target)
    (target / "sub" / "b.txt").write_text("beta\n")  # truncated in the data directory
    assert stage(mirror, target) is True
    assert (target / "sub" / "b.txt").read_text() == "beta\n" * 70


def test_a_staged_copy_only_touched_after_staging_is_kept_with_its_processed_data(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "Set" / "raw"
    stage(mirror, target)
    processed = tmp_path / "data" / "Set" / "processed"
    processed.mkdir()
    later(target / "a.txt")  # e.g. the data directory copied without keeping times
    assert stage(mirror, target) is True
    assert processed.is_dir()
    stamp = json.loads(stamp_path(target).read_text())["files"]
    assert stamp["a.txt"]["staged_mtime_ns"] == (target / "a.txt").stat().st_mtime_ns


def test_without_the_mirror_a_staged_copy_of_another_size_is_refused_by_name(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "Set" / "raw"
    stage(mirror, target)
    (target / "a.txt").write_text("alpha\n")
    with pytest.raises(CorruptDataError) as info:
        stage(None, target)
    assert str(target / "a.txt") in str(info.value) and "paths.data_mirror" in str(info.value)


def test_an_unstamped_copy_that_contradicts_the_checksum_is_replaced(tmp_path):
    """Data directories staged before staging was verified: a damaged copy is repaired."""
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "Set" / "raw"
    (target / "sub").mkdir(parents=True)
    (target / "a.txt").write_text("alpha\n" * 5)  # staged damaged, before stamps existed
    (target / "sub" / "b.txt").write_text("beta\n" * 70)  # staged intact
    intact_mtime = (target / "sub" / "b.txt").stat().st_mtime_ns
    assert stage(mirror, target) is True
    assert (target / "a.txt").read_text() == "alpha\n" * 50
    assert (target / "sub" / "b.txt").stat().st_mtime_ns == intact_mtime  # verified, kept


def test_a_failing_build_from_staged_files_names_the_staged_folder(tmp_path):
    mirror = make_mirror(tmp_path / "mirror")
    target = tmp_path / "data" / "Set" / "raw"

    def build():
        raise ValueError("could not parse")

    with pytest.raises(ValueError, match="could not parse") as info:
        build_from_mirror("Set", mirror, "Set/raw", target, FILES, build)
    assert any(str(target) in note for note in info.value.__notes__)


# ------------------------------------------------------------------ the Cora case
def cora_mirror(source: Path, root: Path) -> Path:
    """A private copy of the mirror's Cora raw files and of its SHA256SUMS."""
    shutil.copytree(source / "Planetoid" / "Cora", root / "Planetoid" / "Cora")
    shutil.copyfile(source / SUMS_NAME, root / SUMS_NAME)
    return root


def cut_test_index(mirror: Path, lines: int = 500) -> None:
    path = mirror / CORA_INDEX
    path.chmod(0o644)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:lines]))


def cora_run(tmp_path: Path, mirror: Path, name: str):
    """A fresh process's view: no dataset cached in memory, the same data directory."""
    clear_cache()
    overrides = [
        "dataset=cora",
        "model=mlp",
        "trainer.max_epochs=2",
        "num_threads=1",
        f"paths.data_dir={tmp_path / 'data'}",
        f"paths.output_dir={tmp_path / 'out'}",
        f"paths.data_mirror={mirror}",
    ]
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    try:
        return run_experiment(cfg, tmp_path / "runs" / name)
    finally:
        clear_cache()


def test_a_cut_cora_test_index_fails_the_run_by_name_until_the_mirror_is_repaired(
    tmp_path, mirror, one_thread
):
    local = cora_mirror(mirror, tmp_path / "mirror")
    cut_test_index(local)
    damaged = cora_run(tmp_path, local, "damaged")
    assert damaged.status == "failed"
    assert "ind.cora.test.index" in damaged.error and "SHA256SUMS" in damaged.error
    shutil.copyfile(mirror / CORA_INDEX, local / CORA_INDEX)  # repaired
    repaired = cora_run(tmp_path, local, "repaired")
    assert repaired.status == "ok", repaired.error
    assert (repaired.data["n_train"], repaired.data["n_val"], repaired.data["n_test"]) == (
        140,
        500,
        1000,
    )


def test_a_cora_copy_staged_from_a_damaged_mirror_is_rebuilt_once_it_is_repaired(
    tmp_path, mirror, one_thread
):
    """Without SHA256SUMS the damage cannot be seen; the repair must still reach data/."""
    local = cora_mirror(mirror, tmp_path / "mirror")
    (local / SUMS_NAME).unlink()
    cut_test_index(local)
    damaged = cora_run(tmp_path, local, "damaged")
    assert damaged.status == "ok" and damaged.data["n_test"] == 500  # undetectable
    shutil.copyfile(mirror / CORA_INDEX, local / CORA_INDEX)
    later(local / CORA_INDEX)
    repaired = cora_run(tmp_path, local, "repaired")
    assert repaired.status == "ok" and repaired.data["n_test"] == 1000
    staged = tmp_path / "data" / "Planetoid" / "Cora" / "raw" / "ind.cora.test.index"
    assert file_sha256(staged) == read_checksums(mirror)[CORA_INDEX]


# ------------------------------------------------------------------ a bad mirror path
def run_with_mirror(make_cfg, dataset: str, mirror: str, run_dir: Path):
    clear_cache()
    cfg = make_cfg(f"dataset={dataset}", "model=mlp", "trainer.max_epochs=1", "num_threads=1")
    cfg.paths.data_mirror = mirror
    try:
        return run_experiment(cfg, run_dir)
    finally:
        clear_cache()


def test_a_bad_mirror_path_does_not_fail_a_dataset_that_needs_no_files(make_cfg, tmp_path):
    record = run_with_mirror(make_cfg, "karate", str(tmp_path / "nonexistent"), tmp_path / "r")
    assert record.status == "ok", record.error


def test_a_dataset_that_needs_files_names_the_bad_mirror_path(make_cfg, tmp_path):
    bad = str(tmp_path / "nonexistent")
    record = run_with_mirror(make_cfg, "cora", bad, tmp_path / "r")
    assert record.status == "failed"
    assert f"data mirror {bad!r} is not a directory" in record.error
