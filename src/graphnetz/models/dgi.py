"""Deep Graph Infomax (Veličković et al., 2019): self-supervised node embeddings.

DGI maximises the mutual information between node states and a graph summary
``s = sigmoid(mean_i z_i)`` by telling real (z, s) pairs from corrupted ones, where the
corruption shuffles node features across nodes (edges kept). It is a training utility
(embeddings, or an encoder pre-trained before supervised training), never a row of the
benchmark report: its loss is not a test metric.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch_geometric.nn import DeepGraphInfomax

from graphnetz.models.encoders import NodeEncoder


def shuffle_features(x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
    """DGI's corruption: a random permutation of the rows of ``x``, same edges."""
    return x[torch.randperm(x.size(0), device=x.device)], edge_index


def mean_summary(z: Tensor, *args, **kwargs) -> Tensor:
    return torch.sigmoid(z.mean(dim=0))


class HiddenLayers(nn.Module):
    """The hidden part of a layer-stack encoder (all layers but the output one), sharing
    its parameters, so DGI can pre-train what node classification later fine-tunes.

    The encoder is a :class:`NodeEncoder` (GCN, GAT, SAGE, GT, MLP) or any module with the
    same two members: ``layers`` (a sequence) and ``apply_layers(x, edge_index, count)``."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        stacked = isinstance(encoder, NodeEncoder) or callable(
            getattr(encoder, "apply_layers", None)
        )
        layers = getattr(encoder, "layers", None) if stacked else None
        if layers is None or len(layers) < 2:
            raise ValueError(
                f"DGI pre-training needs an encoder with >= 2 layers (members ``layers`` and "
                f"``apply_layers``, as GCN, GAT, SAGE, GT, MLP have); got {type(encoder).__name__} with "
                f"{'no layer stack' if layers is None else f'{len(layers)} layer(s)'}"
            )
        self.encoder = encoder

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        return self.encoder.apply_layers(x, edge_index, len(self.encoder.layers) - 1)


def train_dgi(
    encoder: nn.Module, data, epochs: int = 100, lr: float = 1e-3, seed: int = 0
) -> Tensor:
    """Train ``encoder`` (``(x, edge_index) -> [N, hidden]``) with DGI on ``data`` in place.

    Returns the embeddings ``[N, hidden]`` of the trained encoder (eval mode, detached).
    """
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be a positive integer, got {epochs!r}")
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        # on the encoder's device: Lightning calls this before it moves any batch there
        device = next((p.device for p in encoder.parameters()), data.x.device)
        x, edge_index = data.x.float().to(device), data.edge_index.to(device)
        with torch.no_grad():
            hidden = encoder(x, edge_index).size(-1)
        state = {k: v.clone() for k, v in encoder.state_dict().items()}
        dgi = DeepGraphInfomax(hidden, encoder, summary=mean_summary, corruption=shuffle_features)
        dgi = dgi.to(device)  # its discriminator weight is created on the CPU
        encoder.load_state_dict(state)  # DGI's constructor re-initialises the encoder: undo
        optimizer = torch.optim.Adam(dgi.parameters(), lr=lr)
        was_training = encoder.training
        dgi.train()
        for _ in range(epochs):
            optimizer.zero_grad()
            pos_z, neg_z, summary = dgi(x, edge_index)
            dgi.loss(pos_z, neg_z, summary).backward()
            optimizer.step()
        dgi.eval()
        with torch.no_grad():
            z = encoder(x, edge_index)
        encoder.train(was_training)
    return z


def pretrain_node_encoder(model: nn.Module, data, epochs: int, lr: float, seed: int) -> Tensor:
    """DGI on the hidden layers of a node-classification encoder (its output layer is left
    to supervised training). Returns the hidden embeddings."""
    return train_dgi(HiddenLayers(model), data, epochs=epochs, lr=lr, seed=seed)
