"""Offline mirror support: find raw files in a read-only mirror and stage them into our data dir.

A mirror is a folder laid out like torch_geometric's raw folders
(``<mirror>/<Class>/<Name>/raw/...``; see ``../shared/data/MANIFEST.md``). We only ever
*read* from it: files are copied into the project's own data directory, where
torch_geometric writes its ``processed/`` files. Staged files are verified against the
mirror (size, and SHA-256 when the mirror ships ``SHA256SUMS``) and replaced when their
source changes; see :mod:`graphnetz.data.integrity`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from graphnetz.data.integrity import check_unchanged, remove_processed, sync_staged
from graphnetz.launch import absolute_path

MIRROR_ENV = "GRAPHNETZ_DATA_MIRROR"


class DatasetUnavailableError(RuntimeError):
    """A dataset is neither in the mirror nor downloadable."""


def resolve_mirror(mirror: str | os.PathLike | None) -> Path | None:
    """The mirror folder to use: the argument, else ``$GRAPHNETZ_DATA_MIRROR``, else None;
    FileNotFoundError naming the path when it is not a folder."""
    value = mirror if mirror not in (None, "") else os.environ.get(MIRROR_ENV) or None
    path = mirror_location(value)
    if path is None:
        return None
    if not path.is_dir():
        raise FileNotFoundError(
            f"data mirror {str(value)!r} is not a directory; set paths.data_mirror "
            f"(or ${MIRROR_ENV}) to a folder with raw files in torch_geometric's layout, "
            "e.g. ../shared/data"
        )
    return path


def mirror_location(mirror: str | os.PathLike | None) -> Path | None:
    """The mirror folder a run names (argument, else ``$GRAPHNETZ_DATA_MIRROR``), absolute,
    *not* checked: a dataset that needs no files runs whatever the mirror setting; loaders
    that read files check it with :func:`resolve_mirror`, whose error names the bad path."""
    value = mirror if mirror not in (None, "") else os.environ.get(MIRROR_ENV) or None
    return None if value is None else absolute_path(value)


def stage_files(
    mirror: Path | None,
    relative_dir: str,
    target_dir: str | os.PathLike,
    files: Iterable[str],
    dataset: str,
    processed: Iterable[str | os.PathLike] | None = None,
) -> bool:
    """Copy ``files`` from ``mirror/relative_dir`` into ``target_dir`` (never the reverse),
    verified, and keep the copies in step with the mirror.

    Returns True when every file is present in ``target_dir`` afterwards (already there or
    copied), False when there is no mirror or the mirror lacks a file; the caller then falls
    back to downloading. See :mod:`graphnetz.data.integrity` for what is verified and when a
    staged copy is replaced; when one is, the ``processed`` folders built from the old
    copies are removed so that torch_geometric rebuilds them (default: see
    :func:`graphnetz.data.integrity.processed_dirs`).
    """
    files = list(files)
    target = Path(target_dir)
    if mirror is None or not all((mirror / relative_dir / f).is_file() for f in files):
        if all((target / f).is_file() for f in files):
            check_unchanged(target, files)
            return True
        return False
    if sync_staged(mirror, relative_dir, target, files):
        remove_processed(target, processed)
    return True


def unavailable(
    dataset: str,
    mirror: Path | None,
    relative_dir: str,
    files: Iterable[str],
    cause: BaseException | None = None,
) -> DatasetUnavailableError:
    """A uniform, actionable error for a dataset that could not be found or downloaded."""
    tried = [str((mirror / relative_dir) if mirror else f"<no mirror set>/{relative_dir}")]
    msg = (
        f"dataset {dataset!r} is unavailable: not in the data mirror (tried {tried}; "
        f"needed files: {sorted(files)}) and the download failed"
        + (f" ({type(cause).__name__}: {cause})" if cause else "")
        + f". Provide the raw files under <mirror>/{relative_dir}/ and set "
        f"paths.data_mirror=<mirror> (or ${MIRROR_ENV}), or allow network access."
    )
    return DatasetUnavailableError(msg)


T = TypeVar("T")


def build_from_mirror(
    dataset: str,
    mirror,
    relative_dir: str,
    target_dir: str | os.PathLike,
    files: Iterable[str],
    build: Callable[[], T],
) -> T:
    """Stage ``files`` from the mirror (when it has them), then ``build()`` the dataset.

    ``build`` is torch_geometric's class, which finds the staged raw files and skips its
    download. When nothing could be staged and ``build`` fails (no network, say), the error
    becomes a :class:`DatasetUnavailableError` naming the dataset, the paths tried and the fix.
    """
    files = list(files)
    mirror_path = resolve_mirror(mirror)
    staged = stage_files(mirror_path, relative_dir, target_dir, files, dataset)
    try:
        return build()
    except Exception as err:  # download failures surface as URLError/OSError/aiohttp errors
        if staged:  # the raw files are there: one of them may be what ``build`` rejects
            err.add_note(f"while building dataset {dataset!r} from the raw files in {target_dir}")
            raise
        raise unavailable(dataset, mirror_path, relative_dir, files, err) from err
