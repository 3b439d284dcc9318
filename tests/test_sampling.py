"""sample_neighbors: per-target fan-out limit, subset of the input, seeded."""

import torch

from graphnetz.models import sampling
from graphnetz.models.sampling import _keep_smallest_keys, in_degree_slots, sample_neighbors


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


def _near_uniform_graph(nodes: int = 40, per_node: int = 12, seed: int = 0) -> torch.Tensor:
    """Every target has 10-12 incoming edges (some repeated): in-degrees near uniform."""
    g = torch.Generator().manual_seed(seed)
    dst = torch.arange(nodes).repeat_interleave(per_node)
    dst = dst[torch.rand(dst.numel(), generator=g) > 0.1]  # drop about a tenth
    src = torch.randint(0, nodes, (dst.numel(),), generator=g)
    perm = torch.randperm(dst.numel(), generator=g)  # edges in no particular order
    return torch.stack([src[perm], dst[perm]])


def test_the_padded_layout_selects_what_the_sort_selects():
    """On a near-uniform graph the padded matrix keeps the edges the two sorts keep, from
    the same draws (the generator ends in the same state)."""
    edges = _near_uniform_graph()
    slots = in_degree_slots(edges, 40)
    assert slots is not None and slots.width <= 12
    for k in (1, 5, 11, 12, 30):
        by_sort, by_slots = torch.Generator().manual_seed(k), torch.Generator().manual_seed(k)
        expected = sample_neighbors(edges, 40, k, by_sort)
        assert torch.equal(sample_neighbors(edges, 40, k, by_slots, slots=slots), expected)
        assert torch.equal(by_sort.get_state(), by_slots.get_state())


def test_the_padded_layout_breaks_equal_keys_by_edge_order(monkeypatch):
    monkeypatch.setattr(sampling, "PADDED_MAX_FILL", 10.0)  # a tiny, skewed graph
    edges = torch.tensor([[0, 1, 2, 3, 4, 0], [5, 5, 5, 5, 5, 4]])  # node 5: five edges
    slots = in_degree_slots(edges, 6)
    keys = torch.tensor([0.5, 0.2, 0.5, 0.1, 0.5, 0.9])  # the third smallest: three ties
    kept = _keep_smallest_keys(keys, 3, slots, 6)
    assert kept.tolist() == [True, True, False, True, False, True]  # the first tied edge


def test_skewed_graphs_keep_the_sort():
    star = torch.stack([torch.arange(1, 50), torch.zeros(49, dtype=torch.long)])
    assert in_degree_slots(star, 50) is None  # one node has every edge: padding would be 50x
