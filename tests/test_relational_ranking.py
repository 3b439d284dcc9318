"""Filtered ranking of relational link prediction on a hand-made knowledge graph.

Four entities with one-dimensional DistMult embeddings z = [1, 2, 3, 2] and two relations
r0 = +1, r1 = -1, so the score of (h, r, t) is z_h * r * z_t and every rank below can be
worked out on paper. Triples (head, relation, tail):

    train (0, r0, 1), (2, r0, 3)      val (0, r0, 2)      test (0, r0, 3), (1, r1, 2)

Ranks of the test triples (filtered: every other known triple is removed from the
candidates, and the answer itself never competes; ties count half):

* (0, r0, 3), tail side: scores z_0 * z_t = [1, 2, 3, 2], answer 3 scores 2. Known tails of
  (0, r0) are 1, 2, 3, so only entity 0 (score 1) competes: rank 1. Unfiltered it would be
  1 + 1 (entity 2 scores 3) + 0.5 (entity 1 ties at 2) = 2.5.
* (0, r0, 3), head side: scores z_h * z_3 = [2, 4, 6, 4], answer 0 scores 2. Known heads of
  (r0, 3) are 0 and 2; entities 1 and 3 (4 > 2) compete: rank 3.
* (1, r1, 2), tail side: scores -z_1 * z_t = [-2, -4, -6, -4], answer 2 scores -6; only 2
  is known, so 0, 1 and 3 all score higher: rank 4.
* (1, r1, 2), head side: scores -z_h * z_2 = [-3, -6, -9, -6], answer 1 scores -6; entity 0
  scores higher, entity 2 lower, entity 3 ties: rank 1 + 1 + 0.5 = 2.5.
"""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn
from torch_geometric.data import Data

from graphnetz.tasks.link_tasks import RANK_MARK, relational_split

Z = torch.tensor([[1.0], [2.0], [3.0], [2.0]])
R = torch.tensor([[1.0], [-1.0]])
TRAIN = [(0, 0, 1), (2, 0, 3)]
VAL = [(0, 0, 2)]
TEST = [(0, 0, 3), (1, 1, 2)]
# (tail-side rank, head-side rank) per test triple, from the module docstring
HAND_RANKS = {(0, 0, 3): (1.0, 3.0), (1, 1, 2): (4.0, 2.5)}


class FixedDistMult(nn.Module):
    """DistMult with hand-set entity and relation embeddings (nothing is learned)."""

    def __init__(self) -> None:
        super().__init__()
        self.unused = nn.Parameter(torch.zeros(1))  # the optimiser needs a parameter

    def encode(self, x, edge_index) -> Tensor:
        return Z

    def decode(self, z: Tensor, pairs: Tensor, relation: Tensor | None = None) -> Tensor:
        return (z[pairs[0]] * R[relation] * z[pairs[1]]).sum(-1)

    def score_all_tails(self, z: Tensor, heads: Tensor, relation: Tensor) -> Tensor:
        return (z[heads] * R[relation]) @ z.t()


def triples_graph(train, val, test, num_nodes: int, num_relations: int) -> Data:
    """A knowledge graph of (head, relation, tail) triples with its split masks."""
    triples = [*train, *val, *test]
    split = ["train"] * len(train) + ["val"] * len(val) + ["test"] * len(test)
    return Data(
        edge_index=torch.tensor([[h for h, _, _ in triples], [t for _, _, t in triples]]),
        edge_type=torch.tensor([r for _, r, _ in triples]),
        train_mask=torch.tensor([s == "train" for s in split]),
        val_mask=torch.tensor([s == "val" for s in split]),
        test_mask=torch.tensor([s == "test" for s in split]),
        num_nodes=num_nodes,
        num_relations=num_relations,
    )


def knowledge_graph() -> Data:
    return triples_graph(TRAIN, VAL, TEST, num_nodes=4, num_relations=2)


def ranked_triples(graph, split: str, count: int) -> list[tuple[int, int, int]]:
    heads, tails = graph[f"{split}_rank_triples"][:, :count].tolist()
    types = graph[f"{split}_rank_type"][:count].tolist()
    return list(zip(heads, types, tails, strict=True))


def test_filtered_ranks_match_the_hand_computed_ones(make_task):
    graph, _ = relational_split(knowledge_graph(), seed=0)
    task = make_task("link_pred", FixedDistMult(), rank_sample=None)
    ranks = task.filtered_ranks(Z, graph, "test").tolist()
    order = ranked_triples(graph, "test", len(TEST))
    # all tail-side ranks first, then the head-side ranks, in the same triple order
    expected = [HAND_RANKS[t][0] for t in order] + [HAND_RANKS[t][1] for t in order]
    assert ranks == expected


def test_rank_sample_ranks_only_the_first_triples_of_the_seeded_order(make_task):
    graph, _ = relational_split(knowledge_graph(), seed=3)
    task = make_task("link_pred", FixedDistMult(), rank_sample=1)
    [first] = ranked_triples(graph, "test", 1)
    assert task.filtered_ranks(Z, graph, "test").tolist() == list(HAND_RANKS[first])


def test_validation_triple_is_ranked_with_train_and_test_triples_filtered(make_task):
    # (0, r0, 2), tail side: scores [1, 2, 3, 2], answer 2 scores 3; known tails of (0, r0)
    # are 1, 2 and 3, so only entity 0 competes: rank 1. Head side: scores z_h * z_2 =
    # [3, 6, 9, 6], answer 0 scores 3; only 0 is a known head of (r0, 2): entities 1, 2, 3
    # score higher: rank 4.
    graph, _ = relational_split(knowledge_graph(), seed=0)
    task = make_task("link_pred", FixedDistMult(), rank_sample=None)
    assert task.filtered_ranks(Z, graph, "val").tolist() == [1.0, 4.0]


def test_chunked_ranking_gives_the_same_ranks(make_task):
    graph, _ = relational_split(knowledge_graph(), seed=0)
    task = make_task("link_pred", FixedDistMult(), rank_sample=None)
    whole = task.filtered_ranks(Z, graph, "test")
    assert torch.equal(task.filtered_ranks(Z, graph, "test", chunk=1), whole)


def test_reported_mrr_and_hits_come_from_the_filtered_ranks(make_task):
    graph, _ = relational_split(knowledge_graph(), seed=0)
    task = make_task("link_pred", FixedDistMult(), rank_sample=None)
    preds, targets = task.predict_splits(graph)["test"]
    assert int((targets == RANK_MARK).sum()) == 2 * len(TEST)  # both directions per triple
    metrics = task.score(preds, targets)
    ranks = [1.0, 3.0, 4.0, 2.5]
    assert metrics["mrr"] == pytest.approx(sum(1 / r for r in ranks) / 4)
    assert (metrics["hits1"], metrics["hits3"], metrics["hits10"]) == (0.25, 0.75, 1.0)


@pytest.mark.parametrize("bad", [0, -3, True])
def test_rank_sample_must_be_a_positive_integer_or_null(make_task, bad):
    with pytest.raises(ValueError, match=rf"rank_sample must be a positive integer.*{bad!r}"):
        make_task("link_pred", FixedDistMult(), rank_sample=bad)
