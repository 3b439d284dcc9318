"""Models: node encoders, graph-level models, task adapters and multi-label baselines."""

from graphnetz.models.adapters import (
    LinkPredictor,
    PooledEncoder,
    RelationalLinkPredictor,
    wrap_for_task,
)
from graphnetz.models.dgi import train_dgi
from graphnetz.models.encoders import GAT, GCN, MLP, GraphSAGE, GraphTransformer, NodeEncoder
from graphnetz.models.gin import GIN

__all__ = [
    "GAT",
    "GCN",
    "GIN",
    "MLP",
    "GraphSAGE",
    "GraphTransformer",
    "LinkPredictor",
    "NodeEncoder",
    "PooledEncoder",
    "RelationalLinkPredictor",
    "train_dgi",
    "wrap_for_task",
]
