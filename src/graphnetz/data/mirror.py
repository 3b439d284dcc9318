"""Offline mirror support: find raw files in a read-only mirror and stage them into our data dir.

A mirror is a folder laid out like torch_geometric's raw folders
(``<mirror>/<Class>/<Name>/raw/...``; see ``../shared/data/MANIFEST.md``). We only ever
*read* from it: files are copied into the project's own data directory, where
torch_geometric writes its ``processed/`` files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from graphnetz.launch import absolute_path

MIRROR_ENV = "GRAPHNETZ_DATA_MIRROR"


class DatasetUnavailableError(RuntimeError):
    """A dataset is neither in the mirror nor downloadable."""


def resolve_mirror(mirror: str | os.PathLike | None) -> Path | None:
    """The mirror folder to use: the argument, else ``$GRAPHNETZ_DATA_MIRROR``, else None."""
    value = mirror if mirror not in (None, "") else os.environ.get(MIRROR_ENV) or None
    if value is None:
        return None
    path = absolute_path(value)
    if not path.is_dir():
        raise FileNotFoundError(
            f"data mirror {str(value)!r} is not a directory; set paths.data_mirror "
            f"(or ${MIRROR_ENV}) to a folder with raw files in torch_geometric's layout, "
            "e.g. ../shared/data"
        )
    return path


def stage_files(
    mirror: Path | None,
    relative_dir: str,
    target_dir: str | os.PathLike,
    files: Iterable[str],
    dataset: str,
) -> bool:
    """Copy ``files`` from ``mirror/relative_dir`` into ``target_dir`` (never the reverse).

    Returns True when every file is present in ``target_dir`` afterwards (already there or
    copied), False when there is no mirror or the mirror lacks a file; the caller then falls
    back to downloading. Files already staged are left untouched.
    """
    files = list(files)
    target = Path(target_dir)
    if all((target / f).is_file() for f in files):
        return True
    if mirror is None:
        return False
    source = mirror / relative_dir
    if not all((source / f).is_file() for f in files):
        return False
    target.mkdir(parents=True, exist_ok=True)
    for name in files:
        dest = target / name
        if dest.is_file():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        shutil.copyfile(source / name, tmp)  # copyfile: data only, no mirror permissions
        os.replace(tmp, dest)
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
        if staged:
            raise
        raise unavailable(dataset, mirror_path, relative_dir, files, err) from err
