"""Load one network of the catalogue as a simple undirected torch_geometric ``Data``.

Where the file is looked for, in order:

1. the mirror (``paths.data_mirror`` / ``$GRAPHNETZ_DATA_MIRROR``):
   ``<mirror>/networks/<folder>/<file>``, read in place (never written), after checking
   it against the mirror's ``SHA256SUMS`` (a damaged file is refused by name);
2. the same layout under the data dir (``<data_dir>/networks/<folder>/<file>``);
3. the catalogue's CSV archive, downloaded once into the data dir (:mod:`.download`).

When none is there and the download fails, :class:`DatasetUnavailableError` names the
dataset, the places tried and how to get it. The graph carries no node features: the
dataset config's ``features`` rule builds them (:mod:`graphnetz.data.feature_rules`).
Networks with real node classes in the mirror (SocioPatterns metadata) also carry ``y``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch_geometric.data import Data

from graphnetz.data.integrity import verify_in_place
from graphnetz.data.mirror import MIRROR_ENV, DatasetUnavailableError, resolve_mirror
from graphnetz.data.networks import download
from graphnetz.data.networks.catalogue import MirrorFile, NetworkEntry, network_entry
from graphnetz.data.networks.graph import NetworkFormatError, RawGraph, simple_undirected
from graphnetz.data.networks.text_formats import read_node_classes


@dataclass(frozen=True)
class FoundNetwork:
    raw: RawGraph
    path: Path
    # the mirror-layout file it was read from; None for a downloaded catalogue archive
    local: MirrorFile | None = None

    @property
    def folder(self) -> Path:
        """``<mirror or data dir>/networks/<folder>`` of a mirror-layout file."""
        return _entry_folder(self.path, self.local)


def _entry_folder(path: Path, local: MirrorFile) -> Path:
    return path.parents[len(Path(local.file).parts) - 1]


def _verify(mirror: Path, path: Path, local: MirrorFile) -> None:
    """The file and its node classes checked against the mirror's checksums."""
    verify_in_place(mirror, path)
    if local.classes is not None:
        verify_in_place(mirror, _entry_folder(path, local) / local.classes[0])


def read_network(entry: NetworkEntry, network: str, root, mirror) -> FoundNetwork:
    """The raw graph of ``entry``'s ``network`` and where it was read."""
    local = entry.mirror_file(network)
    places = [Path(mirror)] if mirror is not None else []
    if local is not None:
        for base in [*places, Path(root)]:
            path = base / local.relative
            if path.is_file():
                if base in places:
                    _verify(base, path, local)
                return FoundNetwork(local.read(path, network), path, local)
    return read_download(entry, network, root, mirror)


def read_download(entry: NetworkEntry, network: str, root, mirror) -> FoundNetwork:
    archive = download.archive_path(root, entry.catalogue, network)
    if not archive.is_file():
        url = download.archive_url(entry.catalogue, network)
        try:
            download.fetch_url(url, archive)
        except OSError as err:  # URLError, HTTPError, timeouts are OSErrors
            raise _unavailable(entry, network, mirror, url, err) from err
    return FoundNetwork(download.read_csv_archive(archive), archive)


def _unavailable(
    entry: NetworkEntry, network: str, mirror, url: str, err
) -> DatasetUnavailableError:
    source = entry.mirror_file(network)
    in_mirror = (
        f"not in the data mirror (looked for <mirror>/{source.relative}; mirror: "
        f"{mirror if mirror is not None else f'none set, paths.data_mirror or ${MIRROR_ENV}'})"
        if source is not None
        else "not part of the offline mirror"
        + (f" (it holds networks {sorted(entry.mirror)} of this dataset)" if entry.mirror else "")
    )
    return DatasetUnavailableError(
        f"network dataset {entry.name!r} (network {network!r}) is unavailable: {in_mirror}, "
        f"and downloading {url} failed ({type(err).__name__}: {err}). Allow network access, "
        f"or put that archive at <data_dir>/networks/netzschleuder/{entry.catalogue}/"
        f"{network}.csv.zip" + (f", or the file at <mirror>/{source.relative}" if source else "")
    )


def load_network(
    root: str | os.PathLike, mirror=None, *, name: str, network: str | None = None
) -> Data:
    """The simple undirected graph of catalogue entry ``name`` (its ``network``, default
    the entry's own), without node features; ``data.source`` says which file was read."""
    entry = network_entry(name)
    network = str(network) if network is not None else entry.default_network
    found = read_network(entry, network, root, resolve_mirror(mirror))
    data = simple_undirected(found.raw)
    data.source = str(found.path)
    if found.local is not None and found.local.classes is not None:
        file, id_column, class_column = found.local.classes
        data.y = node_classes(found.raw, found.folder / file, id_column, class_column)
    return data


def node_classes(raw: RawGraph, path: Path, id_column: int, class_column: int) -> torch.Tensor:
    """Class index per node (classes numbered in sorted name order) from a metadata file."""
    names = read_node_classes(path, id_column, class_column)
    missing = [node for node in raw.node_ids if node not in names]
    if missing:
        raise NetworkFormatError(path, f"no class for node(s) {missing[:5]} of the contact file")
    order = {name: k for k, name in enumerate(sorted(set(names[n] for n in raw.node_ids)))}
    return torch.tensor([order[names[node]] for node in raw.node_ids], dtype=torch.long)
