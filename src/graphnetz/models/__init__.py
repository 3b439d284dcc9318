"""Models: node encoders, graph-level models, task adapters and multi-label baselines."""

from graphnetz.models.encoders import GAT, GCN, MLP, GraphSAGE, GraphTransformer, NodeEncoder

__all__ = ["GAT", "GCN", "MLP", "GraphSAGE", "GraphTransformer", "NodeEncoder"]
