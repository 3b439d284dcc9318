"""Readers of the product-space JSON layout and of MatrixMarket ``.mtx`` road networks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from graphnetz.data.networks.graph import NetworkFormatError, NodeIndex, RawGraph, edges_array


def read_product_space(path: str | Path) -> RawGraph:
    """Atlas of Economic Complexity layout: ``{"nodes": [{"id"}], "edges": [{"source", "target"}]}``."""
    path = Path(path)
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
        nodes = NodeIndex(str(node["id"]) for node in content["nodes"])
        ends = [(str(e["source"]), str(e["target"])) for e in content["edges"]]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise NetworkFormatError(
            path, f"truncated or corrupt product-space JSON ({err!r})"
        ) from err
    unknown = sorted({x for pair in ends for x in pair} - set(nodes.index))
    if unknown:
        raise NetworkFormatError(path, f"edges name products absent from 'nodes': {unknown[:5]}")
    pairs = [(nodes.index[u], nodes.index[v]) for u, v in ends]
    return RawGraph(len(nodes), edges_array(pairs))


def read_matrix_market(path: str | Path) -> RawGraph:
    """A square MatrixMarket adjacency matrix (read with ``scipy.io.mmread``)."""
    from scipy.io import mmread
    from scipy.sparse import coo_matrix

    path = Path(path)
    try:
        matrix = coo_matrix(mmread(path))
    except (ValueError, IndexError, EOFError) as err:
        raise NetworkFormatError(path, f"truncated or corrupt MatrixMarket file ({err})") from err
    if matrix.shape[0] != matrix.shape[1]:
        raise NetworkFormatError(path, f"adjacency matrix is not square: {matrix.shape}")
    edges = np.stack([matrix.row, matrix.col], axis=1).astype(np.int64)
    return RawGraph(int(matrix.shape[0]), edges)
