"""The network catalogue: small real networks (Netzschleuder style), one loader for all.

``load_network(root, mirror, name=..., network=...)`` returns a simple undirected
``Data`` (see :mod:`.graph` for the cleaning rule); :data:`NETWORKS` lists the entries.
Readers per format: :mod:`.graphml`, :mod:`.text_formats`, :mod:`.other_formats`,
:mod:`.download` (the catalogue's CSV archives).
"""

from graphnetz.data.networks.catalogue import NETWORKS, NetworkEntry, network_entry
from graphnetz.data.networks.graph import NetworkFormatError, RawGraph, simple_undirected
from graphnetz.data.networks.loader import load_network, read_network

__all__ = [
    "NETWORKS",
    "NetworkEntry",
    "NetworkFormatError",
    "RawGraph",
    "load_network",
    "network_entry",
    "read_network",
    "simple_undirected",
]
