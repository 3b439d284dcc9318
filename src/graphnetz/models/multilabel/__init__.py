"""Multi-label node-classification baselines of the multi-label study (8 methods with MLP,
GCN and GAT from ``graphnetz.models``).

Every model follows the project contract ``Cls(in_channels, hidden_channels,
out_channels, num_layers=2, dropout=0.5, **specific)`` with ``forward(x, edge_index)``
returning logits ``[N, C]``; optional hooks ``precompute(data, seed)`` and
``extra_loss(data, train_mask)``. See docs/multilabel_models.md.
"""

from graphnetz.models.multilabel.deepwalk import DeepWalk, random_walks, skipgram_embeddings
from graphnetz.models.multilabel.gcn_lpa import GCNLPA
from graphnetz.models.multilabel.h2gcn import H2GCN, strict_two_hop
from graphnetz.models.multilabel.lanc import LANC, neighbour_stack
from graphnetz.models.multilabel.sage_sampled import SampledSAGE

__all__ = [
    "GCNLPA",
    "H2GCN",
    "LANC",
    "DeepWalk",
    "SampledSAGE",
    "neighbour_stack",
    "random_walks",
    "skipgram_embeddings",
    "strict_two_hop",
]
