"""Readers of the plain-text network formats in the catalogue's mirror folders.

Every reader numbers nodes 0..N-1 and returns the edges as listed (:class:`RawGraph`);
lines it cannot read raise :class:`NetworkFormatError` naming the file and the line, so a
truncated file (a last line cut short, fewer edges than a header declares) is an error,
never a smaller graph.

- :func:`read_network_repository`: Network Repository ``.edges`` (``%`` comments, a
  MatrixMarket-like size line ``E N N``, then 1-based ``u v [w]`` pairs);
- :func:`read_counted_edge_list`: a ``N E`` header line, then 0-based pairs (DNC emails);
- :func:`read_edge_list`: whitespace or CSV pairs, ``#``/``%`` comments, labels of any
  kind (names, AS numbers, person ids); nodes are the labels that appear;
- :func:`read_contacts`: SocioPatterns ``t i j`` contact events, aggregated to the static
  graph of every pair that was ever in contact;
- :func:`read_multiplex`: ``layer node node weight`` rows, the layers aggregated;
- :func:`read_pajek`: Pajek ``.net`` (``*Vertices``/``*Edges``/``*Arcs``, or bare pairs);
- :func:`read_node_classes`: SocioPatterns metadata (``id class ...``), real node classes.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from graphnetz.data.networks.graph import NetworkFormatError, NodeIndex, RawGraph, edges_array


def _lines(path: Path, comments: tuple[str, ...] = ("#", "%")) -> Iterator[tuple[int, str]]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, 1):
            line = line.strip()
            if line and not line.startswith(comments):
                yield number, line


def _ints(path: Path, number: int, fields: list[str], count: int) -> list[int]:
    try:
        if len(fields) < count:
            raise ValueError(f"expected {count} fields")
        return [int(f) for f in fields[:count]]
    except ValueError as err:
        raise NetworkFormatError(path, f"line {number}: {' '.join(fields)!r} ({err})") from None


def read_network_repository(path: str | Path) -> RawGraph:
    path = Path(path)
    lines = _lines(path)
    header = next(lines, None)
    if header is None:
        raise NetworkFormatError(path, "empty file (no size line)")
    a, b, c = _ints(path, header[0], header[1].split(), 3)
    num_edges, num_nodes = (a, b) if b == c else (c, a)  # "E N N" or MatrixMarket "N N E"
    pairs = [_ints(path, n, line.split(), 2) for n, line in lines]
    if len(pairs) != num_edges:
        raise NetworkFormatError(
            path, f"the size line declares {num_edges} edges but {len(pairs)} are listed"
        )
    edges = edges_array(pairs) - 1
    if edges.size and (edges.min() < 0 or edges.max() >= num_nodes):
        raise NetworkFormatError(path, f"a node number is outside 1..{num_nodes}")
    return RawGraph(num_nodes, edges)


def read_counted_edge_list(path: str | Path) -> RawGraph:
    path = Path(path)
    lines = _lines(path)
    header = next(lines, None)
    if header is None:
        raise NetworkFormatError(path, "empty file (no 'nodes edges' line)")
    num_nodes, num_edges = _ints(path, header[0], header[1].split(), 2)
    edges = edges_array([_ints(path, n, line.split(), 2) for n, line in lines])
    if len(edges) != num_edges:
        raise NetworkFormatError(
            path, f"the header declares {num_edges} edges but {len(edges)} are listed"
        )
    if edges.size and (edges.min() < 0 or edges.max() >= num_nodes):
        raise NetworkFormatError(path, f"a node number is outside 0..{num_nodes - 1}")
    return RawGraph(num_nodes, edges)


def read_edge_list(path: str | Path, delimiter: str | None = None) -> RawGraph:
    """Pairs of labels (the first two fields); ``delimiter`` None splits on whitespace."""
    path = Path(path)
    nodes, pairs = NodeIndex(), []
    for number, line in _lines(path):
        fields = next(csv.reader([line], delimiter=delimiter)) if delimiter else line.split()
        fields = [f.strip() for f in fields]
        if len(fields) < 2 or not fields[0] or not fields[1]:
            raise NetworkFormatError(path, f"line {number}: {line!r} is not a pair of nodes")
        pairs.append((nodes.add(fields[0]), nodes.add(fields[1])))
    return RawGraph(len(nodes), edges_array(pairs))


def read_contacts(path: str | Path) -> RawGraph:
    """SocioPatterns ``t i j``: one row per 20 s contact; the static graph keeps every pair."""
    path = Path(path)
    nodes, pairs = NodeIndex(), []
    for number, line in _lines(path):
        _, i, j = _ints(path, number, line.split(), 3)
        pairs.append((nodes.add(i), nodes.add(j)))
    return RawGraph(len(nodes), edges_array(pairs), node_ids=tuple(nodes.index))


def read_multiplex(path: str | Path) -> RawGraph:
    """``layer node node weight`` rows (De Domenico's format); all layers in one graph."""
    path = Path(path)
    nodes, pairs = NodeIndex(), []
    for number, line in _lines(path):
        fields = line.split()
        _, u, v = _ints(path, number, fields, 3)
        if len(fields) < 4:
            raise NetworkFormatError(path, f"line {number}: {line!r} has no weight")
        pairs.append((nodes.add(u), nodes.add(v)))
    return RawGraph(len(nodes), edges_array(pairs))


def read_pajek(path: str | Path) -> RawGraph:
    """Pajek ``.net``: ``*Vertices n`` declares nodes 1..n; without it, bare pairs of labels."""
    path = Path(path)
    declared, section = None, "edges"
    nodes, pairs, directed = NodeIndex(), [], False
    for number, line in _lines(path, comments=("%",)):
        if line.startswith("*"):
            word, *rest = line[1:].split()
            section = word.lower()
            if section == "vertices":
                declared = _ints(path, number, rest, 1)[0]
                nodes = NodeIndex(range(1, declared + 1))
            directed = directed or section == "arcs"
            continue
        if section == "vertices":
            continue
        u, v = _ints(path, number, line.split(), 2)
        if declared is not None and not (1 <= u <= declared and 1 <= v <= declared):
            raise NetworkFormatError(path, f"line {number}: node outside 1..{declared}")
        pairs.append((nodes.add(u), nodes.add(v)))
    return RawGraph(len(nodes), edges_array(pairs), directed)


def read_node_classes(path: str | Path, id_column: int, class_column: int) -> dict[int, str]:
    """Whitespace metadata rows (SocioPatterns ``id class ...``): node id -> class name."""
    path = Path(path)
    classes = {}
    for number, line in _lines(path):
        fields = line.split()
        if len(fields) <= max(id_column, class_column):
            raise NetworkFormatError(path, f"line {number}: {line!r} has no column {class_column}")
        classes[_ints(path, number, [fields[id_column]], 1)[0]] = fields[class_column]
    return classes
