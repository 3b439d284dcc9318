"""Staged copies of mirror files that are whole, match the mirror, and follow it.

When a file is staged from the mirror (:func:`graphnetz.data.mirror.stage_files`):

* the copy must have the source's size, and its SHA-256 must be the one the mirror lists
  in its ``SHA256SUMS`` (``<sha256>  ./<path>`` lines at the mirror's top, as
  ``sha256sum`` writes them) when it lists one; otherwise :class:`CorruptDataError` names
  the file, both checksums and the fix, and nothing is staged under the file's name;
* a stamp beside the staged folder (``<folder>.staged.json``) records, per file, the
  source's path, size, modification time and SHA-256 and the staged copy's size and
  modification time. On the next use a source whose path, size or modification time
  changed is checksummed again: new content is staged anew, and the ``processed`` folders
  built from the old copy are removed (:func:`processed_dirs`), so torch_geometric
  rebuilds them from the new raw files (a repaired mirror repairs the data directory).
  A staged copy whose bytes changed after staging is staged anew too (one that was only
  copied or touched is kept); without a mirror to restage from, one whose size changed
  is refused by name;
* a staged file without a stamp (staged by an earlier version, or put there by hand) is
  checked against the mirror's ``SHA256SUMS`` when that lists it and replaced when it
  differs; without a listed checksum it is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graphnetz.atomic import create_temp, write_text

SUMS_NAME = "SHA256SUMS"
STAMP_SUFFIX = ".staged.json"
_STAMP_VERSION = 1
_CHUNK = 1 << 20
log = logging.getLogger("graphnetz")


class CorruptDataError(RuntimeError):
    """A raw data file is damaged (wrong size or checksum); the message names the file."""


# ------------------------------------------------------------------------ checksums
def file_sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_checksums(mirror: Path) -> dict[str, str]:
    """``SHA256SUMS`` of ``mirror`` as {posix path relative to the mirror: sha256}; {} when
    the mirror ships none. A line that is not ``<64 hex digits> <path>`` is an error."""
    path = mirror / SUMS_NAME
    if not path.is_file():
        return {}
    sums = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        digest, _, name = line.partition(" ")
        name = name.strip().removeprefix("*")  # "*": sha256sum's binary-mode marker
        if len(digest) != 64 or not name or any(c not in "0123456789abcdef" for c in digest):
            raise CorruptDataError(
                f"{path}, line {number}: {line!r} is not '<sha256>  <path>' "
                "(the format `sha256sum` writes)"
            )
        sums[_normal(name)] = digest
    return sums


def _normal(relative: str) -> str:
    return Path(relative.removeprefix("./")).as_posix()


# ------------------------------------------------------------------------ stamps
def stamp_path(target: Path) -> Path:
    return target.parent / f"{target.name}{STAMP_SUFFIX}"


def read_stamp(target: Path) -> dict[str, dict[str, Any]]:
    path = stamp_path(target)
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: every file is checked again
        return {}
    if not isinstance(stamp, dict) or stamp.get("version") != _STAMP_VERSION:
        return {}
    return dict(stamp.get("files") or {})


def _write_stamp(target: Path, files: dict[str, dict[str, Any]]) -> None:
    payload = {"version": _STAMP_VERSION, "files": files}
    write_text(stamp_path(target), json.dumps(payload, indent=1, sort_keys=True))


def _source_signature(source: Path) -> dict[str, Any]:
    st = source.stat()
    return {"source": str(source), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _staged_signature(dest: Path) -> dict[str, Any]:
    st = dest.stat()
    return {"staged_size": st.st_size, "staged_mtime_ns": st.st_mtime_ns}


def _same(entry: dict[str, Any], signature: dict[str, Any]) -> bool:
    return all(entry.get(k) == v for k, v in signature.items())


# ------------------------------------------------------------------------ staging
def sync_staged(mirror: Path, relative_dir: str, target: Path, files: list[str]) -> bool:
    """Bring ``target/<file>`` in step with ``mirror/relative_dir/<file>`` for every file
    (see the module docstring); True when a staged copy was replaced (a first staging is
    not a replacement: nothing can have been built from a file that was not there)."""
    sums = read_checksums(mirror)
    stamp = read_stamp(target)
    before = json.dumps(stamp, sort_keys=True)
    replaced = False
    for name in files:
        source, dest = mirror / relative_dir / name, target / name
        key = _normal(f"{relative_dir}/{name}")
        entry = _current_entry(source, dest, stamp.get(name), sums.get(key), mirror)
        if entry is None:
            replaced = replaced or dest.exists()
            entry = _copy_verified(source, dest, sums.get(key), mirror)
        if entry:
            stamp[name] = entry
        else:
            stamp.pop(name, None)
    if json.dumps(stamp, sort_keys=True) != before:
        _write_stamp(target, stamp)
    return replaced


def _current_entry(
    source: Path, dest: Path, entry: dict | None, expected: str | None, mirror: Path
) -> dict[str, Any] | None:
    """The stamp entry of a staged copy that can stay ({} for a hand-placed copy left
    alone), or None when the file must be staged (anew)."""
    if not dest.is_file():
        return None
    signature = _source_signature(source)
    if entry is None:
        if expected is None:
            return {}  # not staged by us and nothing to check it against
        if file_sha256(dest) != expected:
            log.warning("%s differs from the mirror's checksum: staging it anew", dest)
            return None
        return {**signature, "sha256": expected, **_staged_signature(dest)}
    if not _same(entry, _staged_signature(dest)):
        if file_sha256(dest) != entry.get("sha256"):
            log.warning("%s changed since it was staged: staging it anew", dest)
            return None
        entry = {**entry, **_staged_signature(dest)}  # copied or touched, same bytes
    if _same(entry, signature):
        return entry
    digest = _verified_digest(source, source, expected, mirror)
    if digest != entry.get("sha256"):
        log.info("%s changed in the mirror: staging it anew", source)
        return None
    return {**entry, **signature}  # same content at a new path or time: nothing to redo


def _copy_verified(source: Path, dest: Path, expected: str | None, mirror: Path) -> dict:
    dest.parent.mkdir(parents=True, exist_ok=True)
    signature = _source_signature(source)
    fd, tmp = create_temp(dest)
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)  # copyfile: data only, no mirror permissions
        size = tmp.stat().st_size
        if size != signature["size"]:
            raise CorruptDataError(
                f"copying {source} to {dest} gave {size} bytes, the source has "
                f"{signature['size']}: the mirror file changed while it was read, or the "
                "disk is full; run again"
            )
        digest = _verified_digest(tmp, source, expected, mirror)
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return {**signature, "sha256": digest, **_staged_signature(dest)}


def _verified_digest(path: Path, source: Path, expected: str | None, mirror: Path) -> str:
    """SHA-256 of ``path`` (the bytes of ``source``), checked against ``expected``."""
    digest = file_sha256(path)
    if expected is not None and digest != expected:
        raise CorruptDataError(
            f"mirror file {source} is damaged: its SHA-256 is {digest} "
            f"({source.stat().st_size} bytes), {mirror / SUMS_NAME} lists {expected}. "
            "Restore the file in the mirror (or fix SHA256SUMS if the file was updated "
            "on purpose) and run again."
        )
    return digest


#: Files read in place that matched their listed checksum: (path, size, mtime) -> sha256.
_verified_in_place: dict[tuple[str, int, int], str] = {}


def verify_in_place(mirror: Path, path: Path) -> None:
    """Refuse, by name, a file read in place from ``mirror`` whose SHA-256 is not the one
    the mirror's ``SHA256SUMS`` lists (a file it does not list is read as it is). A file
    is checksummed again only when its size or modification time changes."""
    expected = read_checksums(mirror).get(_normal(path.relative_to(mirror).as_posix()))
    if expected is None:
        return
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if _verified_in_place.get(key) != expected:
        _verified_digest(path, path, expected, mirror)
        _verified_in_place[key] = expected


def check_unchanged(target: Path, files: Iterable[str]) -> None:
    """Without a mirror to compare with: refuse, by name, a staged copy whose size differs
    from the one it had when staged (truncated or edited since)."""
    stamp = read_stamp(target)
    for name in files:
        entry, dest = stamp.get(name), target / name
        if entry and dest.stat().st_size != entry.get("staged_size"):
            raise CorruptDataError(
                f"staged file {dest} has {dest.stat().st_size} bytes, {entry['staged_size']} "
                f"when it was staged from {entry.get('source')}: delete it and run again "
                "with the data mirror set (paths.data_mirror) to stage it anew"
            )


# ------------------------------------------------------------------------ processed
def processed_dirs(target: Path) -> list[Path]:
    """Where torch_geometric keeps what it built from the raw files in ``target``.

    For a ``raw`` folder (PyG's ``<root>/<Name>/raw``): the ``processed`` folder beside it
    and those one level below its parent (``ZINC/subset/processed``). For any other folder
    (an OGB dataset's, holding ``raw/`` and ``processed/``): its own ``processed`` only;
    never a sibling's, which another dataset built. Removing one only costs its rebuild.
    """
    if target.name == "raw":
        parent = target.parent
        candidates = [parent / "processed", *parent.glob("*/processed")]
    else:
        candidates = [target / "processed"]
    return [p for p in candidates if p.is_dir()]


def remove_processed(target: Path, processed: Iterable[str | os.PathLike] | None) -> None:
    folders = processed_dirs(target) if processed is None else [Path(p) for p in processed]
    for folder in folders:
        if folder.is_dir():
            log.info("raw files in %s changed: removing %s to rebuild it", target, folder)
            shutil.rmtree(folder)
        elif folder.is_file():
            folder.unlink()
