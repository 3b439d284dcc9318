"""sample_neighbors: per-target fan-out limit, subset of the input, seeded."""

import torch

from graphnetz.models.sampling import sample_neighbors


def _star_plus_path() -> tuple[torch.Tensor, int]:
    # Node 0 receives from 1..30 (in-degree 30); 31 -> 32 -> 33 is a path (in-degree 1).
    src = list(range(1, 31)) + [31, 32]
    dst = [0] * 30 + [32, 33]
    return torch.tensor([src, dst]), 34


def _edge_set(ei: torch.Tensor) -> set[tuple[int, int]]:
    return set(map(tuple, ei.t().tolist()))


def test_keeps_at_most_k_incoming_edges_per_target():
    ei, n = _star_plus_path()
    out = sample_neighbors(ei, n, 5, torch.Generator().manual_seed(0))
    assert torch.bincount(out[1], minlength=n).max() == 5
    assert int((out[1] == 0).sum()) == 5


def test_keeps_all_edges_of_low_degree_targets():
    ei, n = _star_plus_path()
    out = sample_neighbors(ei, n, 5, torch.Generator().manual_seed(0))
    assert {(31, 32), (32, 33)} <= _edge_set(out)
    assert out.size(1) == 5 + 2


def test_is_a_subset_of_the_input_edges():
    g = torch.Generator().manual_seed(1)
    ei = torch.randint(0, 50, (2, 600), generator=g)
    out = sample_neighbors(ei, 50, 3, torch.Generator().manual_seed(2))
    assert _edge_set(out) <= _edge_set(ei)
    assert torch.bincount(out[1], minlength=50).max() <= 3


def test_same_seed_same_sample_different_seed_different_sample():
    ei, n = _star_plus_path()
    a = sample_neighbors(ei, n, 5, torch.Generator().manual_seed(7))
    b = sample_neighbors(ei, n, 5, torch.Generator().manual_seed(7))
    c = sample_neighbors(ei, n, 5, torch.Generator().manual_seed(8))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_sample_is_roughly_uniform_over_neighbours():
    ei, n = _star_plus_path()
    g = torch.Generator().manual_seed(0)
    counts = torch.zeros(31)
    for _ in range(600):
        kept = sample_neighbors(ei, n, 5, g)
        counts.index_add_(0, kept[0][kept[1] == 0], torch.ones(5))
    # each of the 30 neighbours is kept with probability 5/30 -> 100 times expected
    assert counts[1:].min() > 60 and counts[1:].max() < 140


def test_negative_k_keeps_everything():
    ei, n = _star_plus_path()
    assert torch.equal(sample_neighbors(ei, n, -1), ei)
