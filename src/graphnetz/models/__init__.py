"""Models: node encoders, graph-level models, task adapters and multi-label baselines.

The contract every model follows is :mod:`graphnetz.models.contract`.
"""

from graphnetz.models.adapters import (
    ADAPTERS,
    LinkPredictor,
    PooledEncoder,
    RelationalLinkPredictor,
    adapt,
)
from graphnetz.models.contract import Capabilities, GraphModel, capabilities
from graphnetz.models.dgi import train_dgi
from graphnetz.models.encoders import GAT, GCN, MLP, GraphSAGE, GraphTransformer, NodeEncoder
from graphnetz.models.gin import GIN

__all__ = [
    "ADAPTERS",
    "GAT",
    "GCN",
    "GIN",
    "MLP",
    "Capabilities",
    "GraphModel",
    "GraphSAGE",
    "GraphTransformer",
    "LinkPredictor",
    "NodeEncoder",
    "PooledEncoder",
    "RelationalLinkPredictor",
    "adapt",
    "capabilities",
    "train_dgi",
]
