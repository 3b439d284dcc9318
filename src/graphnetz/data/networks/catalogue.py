"""The network catalogue: each entry's catalogue name, default network and mirror files.

An entry is one dataset of the Netzschleuder catalogue (``catalogue``), which publishes
one or more networks under it (``network``). Where the offline mirror holds the data, the
entry says which file under ``<mirror>/networks/`` has which network and which reader
reads it; any other network of the entry is downloaded (:mod:`.download`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphnetz.data.networks.graph import RawGraph
from graphnetz.data.networks.graphml import read_graphml, read_topology_zoo
from graphnetz.data.networks.other_formats import read_matrix_market, read_product_space
from graphnetz.data.networks.text_formats import (
    read_contacts,
    read_counted_edge_list,
    read_edge_list,
    read_multiplex,
    read_network_repository,
    read_pajek,
)


@dataclass(frozen=True)
class MirrorFile:
    """``<mirror>/networks/<folder>/<file>``, read by ``read(path, network)``."""

    folder: str
    file: str
    read: Callable[[Path, str], RawGraph]
    # real node classes, where the data has them: (file in the folder, id column, class column)
    classes: tuple[str, int, int] | None = None

    @property
    def relative(self) -> str:
        return f"networks/{self.folder}/{self.file}"


def _plain(reader: Callable[..., RawGraph], **options) -> Callable[[Path, str], RawGraph]:
    return lambda path, network: reader(path, **options)


@dataclass(frozen=True)
class NetworkEntry:
    name: str
    catalogue: str
    default_network: str
    mirror: dict[str, MirrorFile] = field(default_factory=dict)
    # one mirror file holding every network of the entry (an archive), if any
    archive: MirrorFile | None = None

    def mirror_file(self, network: str) -> MirrorFile | None:
        return self.mirror.get(network, self.archive)


def _one(name, catalogue, network, folder, file, reader, **options) -> NetworkEntry:
    return NetworkEntry(
        name, catalogue, network, {network: MirrorFile(folder, file, _plain(reader, **options))}
    )


_ROADS = {
    network: MirrorFile("us_roads", f"road-{network}.mtx", _plain(read_matrix_market))
    for network in ("usroads", "usroads-48", "minnesota")
}


def _school(year: int) -> MirrorFile:
    folder = f"thiers{year}"
    return MirrorFile(
        "sp_high_school",
        f"{folder}/tij_{folder}.dat",
        _plain(read_contacts),
        classes=(f"{folder}/metadata_{folder}.dat", 0, 1),
    )


_HIGH_SCHOOL = {"proximity": _school(13), "thiers11": _school(11), "thiers12": _school(12)}
_HOSPITAL = MirrorFile(
    "sp_hospital",
    "tij_hospital.dat",
    _plain(read_contacts),
    classes=("metadata_hospital.dat", 1, 2),
)
_PRODUCTS = {
    "SITC": MirrorFile("product_space", "network_sitc2_4digit.json", _plain(read_product_space)),
    "HS": MirrorFile("product_space", "network_hs92_4digit.json", _plain(read_product_space)),
}

ENTRIES: tuple[NetworkEntry, ...] = (
    _one(
        "euroroad",
        "euroroad",
        "euroroad",
        "euroroad",
        "inf-euroroad.edges",
        read_network_repository,
    ),
    _one(
        "board_directors",
        "board_directors",
        "net1m_2011-08-01",
        "board_directors",
        "net1m_2011-08-01.txt",
        read_edge_list,
    ),
    _one(
        "internet_as",
        "internet_as",
        "internet_as",
        "as-22july06",
        "as-22july06.xml.gz",
        read_graphml,
    ),
    _one("power_grid", "power", "power", "power", "power.xml.gz", read_graphml),
    _one(
        "celegans",
        "celegansneural",
        "celegansneural",
        "celegansneural",
        "celegansneural.xml.gz",
        read_graphml,
    ),
    _one(
        "terrorists_911",
        "terrorists_911",
        "terrorists_911",
        "terrorists_911",
        "9_11_edgelist.txt",
        read_edge_list,
        delimiter=",",
    ),
    _one(
        "train_terrorists",
        "train_terrorists",
        "train_terrorists",
        "train_terrorists",
        "train_terrorists.graphml",
        read_graphml,
    ),
    _one("dnc_emails", "dnc", "dnc", "dnc", "dnc-emails.txt", read_counted_edge_list),
    NetworkEntry("hospital_contacts", "sp_hospital", "sp_hospital", {"sp_hospital": _HOSPITAL}),
    NetworkEntry("high_school_contacts", "sp_high_school", "proximity", _HIGH_SCHOOL),
    _one(
        "eu_airlines",
        "eu_airlines",
        "eu_airlines",
        "eu_airlines",
        "EUAirTransportation_multiplex.edges",
        read_multiplex,
    ),
    _one(
        "london_transport",
        "london_transport",
        "london_transport",
        "london_transport",
        "london_transport_multiplex.edges",
        read_multiplex,
    ),
    _one("karate_network", "karate", "78", "karate", "karate.xml.gz", read_graphml),
    NetworkEntry(
        "internet_topology",
        "internet_top_pop",
        "Kdl",
        archive=MirrorFile("topology_zoo", "graphml.tar.gz", read_topology_zoo),
    ),
    _one("route_views", "route_views", "20000102", "route_views", "as20000102.txt", read_edge_list),
    NetworkEntry("product_space", "product_space", "SITC", _PRODUCTS),
    NetworkEntry("us_roads", "us_roads", "minnesota", _ROADS),
    _one("urban_streets", "urban_streets", "brasilia", "urban_streets", "brasilia.net", read_pajek),
    # download only: the mirror holds none of these
    NetworkEntry("us_patents", "us_patents", "us_patents"),
    NetworkEntry("as_skitter", "as_skitter", "as_skitter"),
    NetworkEntry("wordnet_network", "wordnet", "wordnet"),
    NetworkEntry("budapest_connectome", "budapest_connectome", "all_20k"),
    NetworkEntry("facebook_friends", "facebook_friends", "facebook_friends"),
)
NETWORKS: dict[str, NetworkEntry] = {entry.name: entry for entry in ENTRIES}


def network_entry(name: str) -> NetworkEntry:
    if name not in NETWORKS:
        raise ValueError(f"unknown network dataset {name!r}; valid: {sorted(NETWORKS)}")
    return NETWORKS[name]


__all__ = ["ENTRIES", "NETWORKS", "MirrorFile", "NetworkEntry", "network_entry"]
