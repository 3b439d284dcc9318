"""A tolerant GraphML reader (graph-tool's and the standard dialect), Topology Zoo archives.

graph-tool writes attributes of the non-standard type ``vector_float`` (comma-separated
numbers) and floats in C99 hexadecimal (``0x1.8p+1``); ``networkx.read_graphml`` raises on
both. This reader streams the XML with :mod:`xml.etree.ElementTree`, keeps the structure
(declared nodes, edges as listed) and decodes node and edge attributes, hex floats and
vectors included. GML files of the Topology Zoo list parallel edges without declaring
``multigraph 1``, which networkx then refuses; :func:`read_gml` adds the declaration.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any
from xml.etree import ElementTree

from graphnetz.data.networks.graph import NetworkFormatError, NodeIndex, RawGraph, edges_array


def parse_number(text: str) -> float:
    """A decimal or C99 hexadecimal float (``-0x1.51966d9fc6bfcp+5``)."""
    text = text.strip()
    return float.fromhex(text) if "0x" in text.lower() else float(text)


def _decoder(attr_type: str) -> Callable[[str], Any]:
    if attr_type.startswith("vector_"):
        item = _decoder(attr_type.removeprefix("vector_"))
        return lambda text: [item(part) for part in text.split(",") if part.strip()]
    if attr_type in ("int", "long", "short"):
        return lambda text: int(text.strip())
    if attr_type in ("float", "double"):
        return parse_number
    if attr_type == "boolean":
        return lambda text: text.strip().lower() in ("true", "1")
    return lambda text: text


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _open_xml(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_graphml(path: str | Path, stream: IO[bytes] | None = None) -> RawGraph:
    """Nodes (declared order), edges (as listed) and decoded attributes of a GraphML file.

    ``stream`` reads the XML from an open binary file instead (a tar member); ``path``
    then only names it in errors.
    """
    path = Path(path)
    try:
        if stream is not None:
            return _parse(stream)
        with _open_xml(path) as fh:
            return _parse(fh)
    except (ElementTree.ParseError, EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise NetworkFormatError(path, f"truncated or corrupt GraphML ({err})") from err
    except (KeyError, ValueError) as err:
        raise NetworkFormatError(path, f"unreadable GraphML content ({err!r})") from err


def _parse(fh: IO[bytes]) -> RawGraph:
    keys: dict[str, tuple[str, str, Callable[[str], Any]]] = {}
    nodes, pairs = NodeIndex(), []
    attrs: dict[str, dict[str, list]] = {"node": {}, "edge": {}}
    directed, seen_graph = False, False
    for event, elem in ElementTree.iterparse(fh, events=("start", "end")):
        tag = _local(elem.tag)
        if event == "start":
            if tag == "graph" and not seen_graph:
                directed = elem.get("edgedefault", "directed") == "directed"
                seen_graph = True
            continue
        if tag == "key":
            keys[elem.attrib["id"]] = (
                elem.get("for", "all"),
                elem.get("attr.name", elem.attrib["id"]),
                _decoder(elem.get("attr.type", "string")),
            )
        elif tag in ("node", "edge"):
            if tag == "node":
                position = nodes.add(elem.attrib["id"])
            else:
                pairs.append((nodes.add(elem.attrib["source"]), nodes.add(elem.attrib["target"])))
                position = len(pairs) - 1
            for data in elem:
                if _local(data.tag) == "data" and data.get("key") in keys:
                    _, name, decode = keys[data.attrib["key"]]
                    column = attrs[tag].setdefault(name, [])
                    column.extend([None] * (position - len(column)))
                    column.append(decode(data.text or ""))
            elem.clear()
    if not seen_graph:
        raise ValueError("no <graph> element")
    return RawGraph(len(nodes), edges_array(pairs), directed, attrs["node"], attrs["edge"])


def _zoo_member(network: str, gml: bool) -> str:
    return f"gml/{network}.gml" if gml else f"graphml/{network}.graphml"


def _zoo_graph(where: str, raw: bytes, gml: bool) -> RawGraph:
    return read_gml(where, raw.decode("utf-8")) if gml else read_graphml(where, io.BytesIO(raw))


def _open_zoo(archive: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(archive, "r:gz")
    except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
        raise NetworkFormatError(archive, f"truncated or corrupt archive ({err})") from err


def topology_zoo_names(archive: str | Path) -> list[str]:
    """The network names in a Topology Zoo ``graphml.tar.gz`` or ``gml.tar.gz``."""
    archive = Path(archive)
    try:
        with _open_zoo(archive) as tar:
            return sorted(Path(m.name).stem for m in tar.getmembers() if m.isfile())
    except (tarfile.TarError, EOFError, zlib.error, OSError) as err:
        raise NetworkFormatError(archive, f"truncated or corrupt archive ({err})") from err


def read_topology_zoo(archive: str | Path, network: str) -> RawGraph:
    """One network of the Topology Zoo archive (``graphml.tar.gz`` or ``gml.tar.gz``)."""
    archive = Path(archive)
    gml = archive.name.startswith("gml")
    member = _zoo_member(network, gml)
    with _open_zoo(archive) as tar:
        try:
            raw = tar.extractfile(member).read()
        except KeyError:
            names = topology_zoo_names(archive)
            raise ValueError(
                f"unknown Topology Zoo network {network!r}; valid: {names[:8]} ... "
                f"({len(names)} in {archive.name})"
            ) from None
    return _zoo_graph(f"{archive}:{member}", raw, gml)


def iter_topology_zoo(archive: str | Path) -> Iterator[tuple[str, RawGraph]]:
    """Every network of the archive, reading it once."""
    archive = Path(archive)
    gml = archive.name.startswith("gml")
    with _open_zoo(archive) as tar:
        for member in tar:
            if member.isfile():
                raw = tar.extractfile(member).read()
                yield Path(member.name).stem, _zoo_graph(f"{archive}:{member.name}", raw, gml)


def read_gml(path: str | Path, text: str | None = None) -> RawGraph:
    """A GML file, parallel edges kept (``multigraph 1`` is declared when missing)."""
    import networkx as nx

    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    if "multigraph" not in text:
        text = text.replace("graph [", "graph [\n  multigraph 1", 1)
    try:
        graph = nx.parse_gml(text, label="id")
    except nx.NetworkXError as err:
        raise NetworkFormatError(path, f"truncated or corrupt GML ({err})") from err
    nodes = NodeIndex(graph.nodes)
    pairs = [(nodes.index[u], nodes.index[v]) for u, v in graph.edges()]
    return RawGraph(len(nodes), edges_array(pairs), graph.is_directed())
