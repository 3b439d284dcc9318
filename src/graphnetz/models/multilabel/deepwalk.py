"""DeepWalk (Perozzi et al., 2014): structure-only embeddings + one-vs-rest linear classifier."""

from __future__ import annotations

import zlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphnetz.models.contract import GraphModel
from graphnetz.models.sampling import random_neighbor, to_csr


def random_walks(
    edge_index: Tensor,
    num_nodes: int,
    walks_per_node: int = 10,
    walk_length: int = 10,
    generator: torch.Generator | None = None,
) -> Tensor:
    """Uniform random walks, ``[walks_per_node * N, walk_length]`` node ids.

    ``walk_length`` counts nodes (the start node included). Each pass starts one walk
    at every node, in a fresh random order; all walks advance together, one vectorised
    step at a time. Isolated nodes stay put.
    """
    if walks_per_node < 1 or walk_length < 1:
        raise ValueError(
            f"walks_per_node and walk_length must be >= 1, got {walks_per_node}, {walk_length}"
        )
    rowptr, col = to_csr(edge_index, num_nodes)
    starts = torch.cat(
        [
            torch.randperm(num_nodes, generator=generator, device=edge_index.device)
            for _ in range(walks_per_node)
        ]
    )
    steps = [starts]
    for _ in range(walk_length - 1):
        steps.append(random_neighbor(rowptr, col, steps[-1], generator))
    return torch.stack(steps, dim=1)


def stable_hash(text: str) -> int:
    """Process-independent replacement for ``hash`` (gensim's ``hashfxn``).

    Python salts ``hash(str)`` per process unless PYTHONHASHSEED is set; gensim 4
    seeds its vectors from ``seed`` alone, but passing a stable hash keeps any code
    path that still uses ``hashfxn`` reproducible too.
    """
    return zlib.crc32(text.encode("utf-8"))


def skipgram_embeddings(
    walks: Tensor,
    num_nodes: int,
    dim: int = 64,
    window: int = 5,
    epochs: int = 5,
    seed: int = 0,
    workers: int = 1,
) -> Tensor:
    """gensim skip-gram (negative sampling) on the walks; row ``v`` is node ``v``'s vector."""
    from gensim.models import Word2Vec  # deferred: gensim is slow to import

    sentences = [[str(v) for v in walk] for walk in walks.tolist()]
    model = Word2Vec(
        sentences,
        vector_size=dim,
        window=window,
        min_count=1,
        sg=1,
        epochs=epochs,
        seed=seed,
        workers=workers,
        hashfxn=stable_hash,
    )
    # Every node starts at least one walk, so every node is in the vocabulary.
    vectors = np.stack([model.wv[str(v)] for v in range(num_nodes)])
    return torch.from_numpy(vectors).float()


class DeepWalk(GraphModel):
    """Frozen DeepWalk embeddings (fitted in ``precompute``) and a linear layer on top.

    The linear layer trained with the task's BCE is one-vs-rest logistic regression on
    the embeddings, standardised per dimension (zero mean, unit variance).
    ``hidden_channels`` is the embedding size; ``x`` and ``num_layers`` are ignored.
    Deterministic for a given seed when ``workers == 1`` (gensim's multi-threaded
    training is not reproducible).
    """

    task_types = frozenset({"ml_node_cls"})
    uses_node_features = False  # learns from walks on the graph only

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        out_channels: int,
        num_layers: int = 2,
        dropout: float = 0.0,
        walks_per_node: int = 10,
        walk_length: int = 10,
        window: int = 5,
        w2v_epochs: int = 5,
        workers: int = 1,
        embedding_dim: int = 64,
    ) -> None:
        super().__init__()
        # The skip-gram size is its own hyperparameter (64 in the multi-label study), so a sweep that widens
        # the GNNs (model.hidden_channels=256) leaves DeepWalk as specified.
        self.embedding_dim = embedding_dim
        self.walks_per_node = walks_per_node
        self.walk_length = walk_length
        self.window = window
        self.w2v_epochs = w2v_epochs
        self.workers = workers
        self.dropout = dropout
        self.classifier = nn.Linear(embedding_dim, out_channels)
        self.register_buffer("embedding", None)

    def precompute(self, data, seed: int) -> None:
        """Walk the graph and fit skip-gram; both seeded by ``seed``."""
        generator = torch.Generator(device="cpu").manual_seed(seed)
        walks = random_walks(
            data.edge_index.cpu(), data.num_nodes, self.walks_per_node, self.walk_length, generator
        )
        emb = skipgram_embeddings(
            walks,
            data.num_nodes,
            self.embedding_dim,
            self.window,
            self.w2v_epochs,
            seed,
            self.workers,
        )
        # Standardising is an affine map (same linear hypothesis class) that makes
        # Adam at the task's learning rate converge in the usual epoch budget.
        emb = (emb - emb.mean(0)) / emb.std(0).clamp(min=1e-8)
        self.embedding = emb.to(self.classifier.weight.device)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        if self.embedding is None:
            raise RuntimeError("DeepWalk.precompute(data, seed) must be called before forward")
        if x.size(0) != self.embedding.size(0):
            raise ValueError(
                f"DeepWalk was prepared on {self.embedding.size(0)} nodes, got x with {x.size(0)}"
            )
        h = F.dropout(self.embedding, self.dropout, self.training)
        return self.classifier(h)
