"""The catalogue's published CSV archives: download once into the data dir, then parse.

Netzschleuder publishes every network as ``<NETZ_FILES>/<dataset>/files/<network>.csv.zip``
holding ``edges.csv`` (header ``# source, target, ...``, 0-based node indices) and
``nodes.csv`` (one row per node, isolated ones included). The archive is kept under
``<data_dir>/networks/netzschleuder/<dataset>/<network>.csv.zip``; nothing is unpacked.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path

import numpy as np

from graphnetz.data.networks.graph import NetworkFormatError, RawGraph

NETZ_FILES = "https://networks.skewed.de/net"
TIMEOUT_S = 60


def archive_url(dataset: str, network: str) -> str:
    return f"{NETZ_FILES}/{dataset}/files/{network}.csv.zip"


def archive_path(root: str | os.PathLike, dataset: str, network: str) -> Path:
    return Path(root) / "networks" / "netzschleuder" / dataset / f"{network}.csv.zip"


def fetch_url(url: str, dest: Path) -> None:
    """Stream ``url`` into ``dest`` (a unique temporary file first, then renamed)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            shutil.copyfileobj(response, out, length=1 << 20)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_csv_archive(path: str | Path) -> RawGraph:
    """The graph in a catalogue ``.csv.zip`` (edges.csv, plus nodes.csv for the node count)."""
    import pandas as pd

    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "edges.csv" not in names:
                raise NetworkFormatError(path, f"no edges.csv in the archive (has {sorted(names)})")
            with archive.open("edges.csv") as fh:
                table = pd.read_csv(fh, header=None, skiprows=1, usecols=[0, 1], dtype=np.int64)
            num_nodes = None
            if "nodes.csv" in names:
                with archive.open("nodes.csv") as fh:
                    num_nodes = len(pd.read_csv(fh, header=None, skiprows=1, usecols=[0]))
    except (zipfile.BadZipFile, EOFError, ValueError, pd.errors.ParserError) as err:
        if isinstance(err, NetworkFormatError):
            raise
        raise NetworkFormatError(path, f"truncated or corrupt catalogue archive ({err})") from err
    edges = table.to_numpy(dtype=np.int64).reshape(-1, 2)
    largest = int(edges.max()) + 1 if edges.size else 0
    if num_nodes is None:
        num_nodes = largest
    elif largest > num_nodes:
        raise NetworkFormatError(path, f"edges.csv names node {largest - 1} of {num_nodes} nodes")
    return RawGraph(num_nodes, edges)
