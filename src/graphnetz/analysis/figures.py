"""Figures of the multi-label analysis: label-count histogram and CCNS heatmap."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure


def label_count_histogram(y, name: str = "") -> Figure:
    """Histogram of labels per node |ℓ(i)| (one bar per integer count, 0 included)."""
    per_node = np.asarray(y).sum(1).astype(int)
    counts = np.bincount(per_node)
    fig = Figure(figsize=(4.5, 3.2), layout="constrained")
    ax = fig.add_subplot()
    ax.bar(np.arange(counts.size), counts, color="tab:blue")
    ax.set_xlabel("labels per node")
    ax.set_ylabel("nodes")
    ax.set_title(f"{name} label counts".strip())
    return fig


def ccns_heatmap(ccns: np.ndarray, name: str = "") -> Figure:
    """C × C heatmap of the multi-label CCNS matrix."""
    c = ccns.shape[0]
    size = min(3.0 + 0.18 * c, 12.0)
    fig = Figure(figsize=(size + 1.0, size), layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(np.ma.masked_invalid(ccns), cmap="viridis", origin="upper")
    ax.set_xlabel("class c′")
    ax.set_ylabel("class c")
    ax.set_title(f"{name} multi-label CCNS".strip())
    if c <= 40:
        ticks = np.arange(c)
        ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=6)
        ax.set_yticks(ticks, [str(t) for t in ticks], fontsize=6)
    fig.colorbar(im, ax=ax, shrink=0.8)
    return fig
