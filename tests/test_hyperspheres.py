"""The study's released Synthetic1 points with seeded edges at the published alpha, b."""

import torch

from graphnetz.analysis.homophily import label_homophily
from graphnetz.data.hyperspheres import load_hyperspheres


def test_released_points_with_published_edge_rule_match_synthetic1(mirror, data_dir):
    a = load_hyperspheres(str(data_dir), mirror, seed=0)
    assert a.x.shape == (3000, 20) and a.y.shape == (3000, 20)
    assert abs(a.y.sum(1).mean().item() - 3.23) < 0.01  # labels per node, as released
    pairs = a.edge_index.shape[1] // 2
    assert 0.9e6 <= pairs <= 1.1e6  # the study: about 1.0 M edges
    assert abs(label_homophily(a.edge_index, a.y) - 0.377) < 0.02  # info.txt: 0.3768
    assert a.train_mask.shape == (3000, 3) and not (a.train_mask & a.test_mask).any()
    again = load_hyperspheres(str(data_dir), mirror, seed=0)
    other = load_hyperspheres(str(data_dir), mirror, seed=1)
    assert torch.equal(a.edge_index, again.edge_index)  # same seed, same graph
    assert not torch.equal(a.edge_index, other.edge_index)  # the seed resamples the edges
    assert torch.equal(a.x, other.x) and torch.equal(a.y, other.y)  # the points are fixed
