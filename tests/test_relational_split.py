"""Negative sampling by corruption and the split of a knowledge graph into task data."""

from __future__ import annotations

import pytest
import torch
from scipy import stats
from torch_geometric.data import Data

from graphnetz.tasks.link_tasks import corrupt, relational_split

# --- corrupt -------------------------------------------------------------------------------

N_ENTITIES = 10
N_TRIPLES = 20_000


def sentinel_triples(n: int = N_TRIPLES) -> torch.Tensor:
    # head N_ENTITIES and tail N_ENTITIES + 1 lie outside the entity range, so a replaced
    # side is always recognisable (a replacement is an entity 0..N_ENTITIES-1)
    return torch.tensor([[N_ENTITIES] * n, [N_ENTITIES + 1] * n])


def test_corrupt_replaces_exactly_one_side_of_every_triple():
    out = corrupt(sentinel_triples(), N_ENTITIES, torch.Generator().manual_seed(0))
    head_replaced = out[0] != N_ENTITIES
    tail_replaced = out[1] != N_ENTITIES + 1
    assert torch.equal(head_replaced, ~tail_replaced)


def test_corrupt_picks_the_head_with_probability_one_half():
    out = corrupt(sentinel_triples(), N_ENTITIES, torch.Generator().manual_seed(1))
    heads = int((out[0] != N_ENTITIES).sum())
    assert stats.binomtest(heads, N_TRIPLES, 0.5).pvalue > 1e-3


def test_corrupt_draws_the_new_entity_uniformly():
    out = corrupt(sentinel_triples(), N_ENTITIES, torch.Generator().manual_seed(2))
    new = torch.where(out[0] != N_ENTITIES, out[0], out[1])
    counts = torch.bincount(new, minlength=N_ENTITIES)
    assert counts.numel() == N_ENTITIES  # every replacement is an entity 0..9
    assert stats.chisquare(counts.numpy()).pvalue > 1e-3


def test_corrupt_is_deterministic_under_a_generator_and_leaves_its_input_alone():
    triples = torch.tensor([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    before = triples.clone()
    a = corrupt(triples, 50, torch.Generator().manual_seed(7))
    b = corrupt(triples, 50, torch.Generator().manual_seed(7))
    c = corrupt(triples, 50, torch.Generator().manual_seed(8))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(triples, before)


# --- relational_split ----------------------------------------------------------------------


def small_kg(seed: int = 0) -> Data:
    """40 train, 10 val and 10 test triples over 30 entities and 3 relations."""
    gen = torch.Generator().manual_seed(seed)
    n = 60
    edge_index = torch.randint(30, (2, n), generator=gen)
    split = torch.tensor([0] * 40 + [1] * 10 + [2] * 10)
    return Data(
        edge_index=edge_index,
        edge_type=torch.randint(3, (n,), generator=gen),
        train_mask=split == 0,
        val_mask=split == 1,
        test_mask=split == 2,
        num_nodes=30,
        num_relations=3,
    )


def triple_set(index, types) -> set[tuple[int, int, int]]:
    return {(h, r, t) for (h, t), r in zip(index.t().tolist(), types.tolist(), strict=True)}


def test_message_passing_uses_the_training_triples_in_both_directions_only():
    data = small_kg()
    graph, info = relational_split(data, seed=0)
    train = data.edge_index[:, data.train_mask].t().tolist()
    expected = {(h, t) for h, t in train} | {(t, h) for h, t in train}
    assert set(map(tuple, graph.edge_index.t().tolist())) == expected
    assert info["num_mp_edges"] == graph.edge_index.size(1)


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_each_split_scores_its_triples_against_as_many_corruptions(split):
    data = small_kg()
    graph, info = relational_split(data, seed=0)
    mask = data[f"{split}_mask"]
    pos, rel = data.edge_index[:, mask], data.edge_type[mask]
    n = pos.size(1)
    assert info[f"n_{split}_triples"] == n
    assert torch.equal(graph[f"{split}_label"], torch.tensor([1.0] * n + [0.0] * n))
    assert torch.equal(graph[f"{split}_label_index"][:, :n], pos)
    assert torch.equal(graph[f"{split}_label_type"], torch.cat([rel, rel]))
    negatives = graph[f"{split}_label_index"][:, n:]
    # a corruption keeps exactly one side of its triple (or both, if it drew the same entity)
    kept = (negatives == pos).sum(0)
    assert (kept >= 1).all()


def test_ranked_triples_are_a_seeded_permutation_of_the_split():
    data = small_kg()
    a, _ = relational_split(data, seed=0)
    b, _ = relational_split(data, seed=0)
    c, _ = relational_split(data, seed=1)
    mask = data.test_mask
    everything = triple_set(data.edge_index[:, mask], data.edge_type[mask])
    assert triple_set(a.test_rank_triples, a.test_rank_type) == everything
    assert a.test_rank_triples.size(1) == int(mask.sum())
    assert torch.equal(a.test_rank_triples, b.test_rank_triples)
    assert torch.equal(a.test_label_index, b.test_label_index)
    assert not torch.equal(a.test_rank_triples, c.test_rank_triples)


def test_filter_indices_know_every_train_val_and_test_triple():
    data = small_kg()
    graph, _ = relational_split(data, seed=0)
    h, t, r = data.edge_index[0], data.edge_index[1], data.edge_type
    rows, tails = graph.tail_index.answers(h, r)
    found = {(int(h[i]), int(r[i]), int(a)) for i, a in zip(rows, tails, strict=True)}
    known = triple_set(data.edge_index, r)
    assert found == known
    rows, heads = graph.head_index.answers(t, r)
    found = {(int(a), int(r[i]), int(t[i])) for i, a in zip(rows, heads, strict=True)}
    assert found == known


def test_a_graph_without_relations_or_masks_is_refused_by_name():
    data = Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2)
    with pytest.raises(ValueError, match=r"edge_type.*train_mask"):
        relational_split(data, seed=0)
