"""Task adapters: let a node encoder (``forward(x, edge_index) -> [N, d]``) enter any task.

The adapter is chosen by the level of the task (``graphnetz.task_types``), one function per
level in :data:`ADAPTERS`; :func:`adapt` is the one entry point:

- ``node``: the encoder as it is (its last layer emits the classes or labels).
- ``graph``: :class:`PooledEncoder`, global mean pool + 2-layer MLP on a hidden-size
  encoder, ``forward(x, edge_index, batch) -> [num_graphs, out]``. Graph-level models
  (declared ``graph_level = True``, e.g. GIN) are used as they are.
- ``link``: :class:`LinkPredictor`, ``encode(x, edge_index) -> z`` and
  ``decode(z, pairs) = <z_u, z_v>`` (dot product).
- a model with ``forward(data)`` (the PyG ``Data`` object) is wrapped in
  :class:`DataForward` first, so every level calls it as ``(x, edge_index[, batch])``.
- ``relational_link`` (a knowledge graph): :class:`RelationalLinkPredictor`, learned node
  embeddings as the encoder's input (knowledge graphs have no features) and the DistMult
  decoder ``<z_h, r, z_t> = sum_k z_h[k] r[k] z_t[k]`` with learned relation embeddings.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.nn import global_mean_pool

from graphnetz.models.contract import Capabilities, capabilities
from graphnetz.task_types import GRAPH, LINK, NODE, RELATIONAL_LINK

EncoderFactory = Callable[[int, int], nn.Module]  # (in_channels, out_channels) -> module


class DataForward(nn.Module):
    """Calls a ``forward(data)`` model with a ``Data`` object of the tensors it is given."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: Tensor, edge_index: Tensor, batch: Tensor | None = None) -> Tensor:
        data = Data(x=x, edge_index=edge_index)
        if batch is not None:
            data.batch = batch
        return self.model(data)


class PooledEncoder(nn.Module):
    """Node encoder -> global mean pool -> MLP: a graph-level model from any node encoder."""

    def __init__(
        self, encoder: nn.Module, hidden_channels: int, out_channels: int, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(
            nn.ReLU(),
            nn.Linear(hidden_channels, hidden_channels),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden_channels, out_channels),
        )

    def forward(self, x: Tensor, edge_index: Tensor, batch: Tensor) -> Tensor:
        return self.head(global_mean_pool(self.encoder(x, edge_index), batch))


class LinkPredictor(nn.Module):
    """Node encoder + dot-product decoder: logit(u ~ v) = <z_u, z_v>."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder

    def encode(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.encoder(x, edge_index)

    def decode(self, z: Tensor, pairs: Tensor, relation: Tensor | None = None) -> Tensor:
        return (z[pairs[0]] * z[pairs[1]]).sum(-1)


class RelationalLinkPredictor(LinkPredictor):
    """Learned entity embeddings -> node encoder -> DistMult decoder <z_h, r, z_t>."""

    def __init__(
        self,
        encoder: nn.Module,
        num_nodes: int,
        num_relations: int,
        embedding_dim: int,
        hidden_channels: int,
    ) -> None:
        super().__init__(encoder)
        self.node_embedding = nn.Embedding(num_nodes, embedding_dim)
        self.relation_embedding = nn.Embedding(num_relations, hidden_channels)
        # N(0, 1) entity inputs (the Embedding default) keep encoder states O(1); a
        # Glorot-small init there makes the triple product ~0 and its gradient vanish
        nn.init.xavier_uniform_(self.relation_embedding.weight)

    def encode(self, x: Tensor | None, edge_index: Tensor) -> Tensor:
        return self.encoder(self.node_embedding.weight, edge_index)

    def decode(self, z: Tensor, pairs: Tensor, relation: Tensor | None = None) -> Tensor:
        if relation is None:
            raise ValueError("the DistMult decoder needs the relation of every pair")
        return (z[pairs[0]] * self.relation_embedding(relation) * z[pairs[1]]).sum(-1)

    def score_all_tails(self, z: Tensor, heads: Tensor, relation: Tensor) -> Tensor:
        """Scores of (h, r, every entity): [len(heads), num_nodes] (DistMult is symmetric
        in h and t, so the same call ranks heads given (r, t))."""
        return (z[heads] * self.relation_embedding(relation)) @ z.t()


@dataclass(frozen=True)
class Sizes:
    """The data-dependent widths of a run's model."""

    in_channels: int
    out_channels: int
    hidden_channels: int


def node_model(factory: EncoderFactory, caps: Capabilities, sizes: Sizes, extras: dict):
    return factory(sizes.in_channels, sizes.out_channels)


def graph_model(factory: EncoderFactory, caps: Capabilities, sizes: Sizes, extras: dict):
    if caps.graph_level:
        return factory(sizes.in_channels, sizes.out_channels)
    hidden = sizes.hidden_channels
    encoder = factory(sizes.in_channels, hidden)
    return PooledEncoder(encoder, hidden, sizes.out_channels, extras.get("head_dropout", 0.0))


def link_model(factory: EncoderFactory, caps: Capabilities, sizes: Sizes, extras: dict):
    return LinkPredictor(factory(sizes.in_channels, sizes.hidden_channels))


def relational_link_model(
    factory: EncoderFactory, caps: Capabilities, sizes: Sizes, extras: dict
) -> nn.Module:
    # no input features (in_channels 0): entity embeddings of the hidden size
    hidden = sizes.hidden_channels
    dim = sizes.in_channels if sizes.in_channels > 0 else hidden
    num_nodes, num_relations = int(extras["num_nodes"]), int(extras["num_relations"])
    return RelationalLinkPredictor(factory(dim, hidden), num_nodes, num_relations, dim, hidden)


#: ``(encoder factory, its capabilities, sizes, the data's extras) -> the run's model``
Adapter = Callable[[EncoderFactory, Capabilities, Sizes, dict], nn.Module]
#: level -> the adapter that builds a run's model from an encoder factory
ADAPTERS: dict[str, Adapter] = {
    NODE: node_model,
    GRAPH: graph_model,
    LINK: link_model,
    RELATIONAL_LINK: relational_link_model,
}


def adapt(
    factory: EncoderFactory,
    cls: type,
    level: str,
    in_channels: int,
    out_channels: int,
    hidden_channels: int = 64,
    **extras,
) -> nn.Module:
    """The model of a run at ``level``: ``factory(in, out)`` builds the encoder of class
    ``cls``, the level's adapter its head. ``extras`` come from the task's data
    (``TaskData.extras``: ``num_nodes`` and ``num_relations`` for knowledge graphs)."""
    if level not in ADAPTERS:
        raise ValueError(f"no adapter for level {level!r}; valid: {list(ADAPTERS)}")
    sizes = Sizes(in_channels, out_channels, hidden_channels)
    caps = capabilities(cls)
    if caps.takes_data:
        factory = _data_forward(factory)
    return ADAPTERS[level](factory, caps, sizes, extras)


def _data_forward(factory: EncoderFactory) -> EncoderFactory:
    return lambda in_channels, out_channels: DataForward(factory(in_channels, out_channels))


__all__ = [
    "ADAPTERS",
    "DataForward",
    "LinkPredictor",
    "PooledEncoder",
    "RelationalLinkPredictor",
    "adapt",
]
