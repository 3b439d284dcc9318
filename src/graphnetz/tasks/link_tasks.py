"""Link prediction (``link_pred``): plain graphs and knowledge graphs, one task type.

Plain graphs: a seeded ``RandomLinkSplit`` (undirected; val 5 %, test 10 % by default;
``dataset.split.link: {val, test}`` changes them), full-batch training with fresh negatives every epoch
(``negative_sampling``), BCE with logits, dot-product decoder. Message passing uses the
training edges only, for every split, and featureless graphs get features computed from
the training graph only (``[1, log(1 + training degree)]``, or the rule the dataset
config's ``features`` names: :mod:`graphnetz.data.feature_rules`), so no val/test edge leaks.

Knowledge graphs (the dataset carries ``edge_type`` and train/val/test triple masks) route
automatically to the relational variant: learned entity embeddings (KGs have no features)
through the node encoder over the training triples (as an undirected, relation-agnostic
graph), DistMult decoder, negatives by corrupting the head or the tail of each triple,
mini-batches of ``task.batch_size`` triples (each step re-encodes the full graph).

Metrics. Both variants report ROC-AUC and average precision on the split's positive edges
against an equal number of fixed negatives; ROC-AUC is the primary metric of plain graphs.
The relational variant ranks by filtered MRR (primary: AUC against random corruptions is
near 1 for any sensible model and does not separate them) and adds Hits@1/3/10: each of up to ``rank_sample`` triples per split (a seeded sample; null =
all) is ranked against *all* entities, in both directions (tail and head), with every
other known true triple (train/val/test) filtered out; ties count half. Cost per epoch:
2 * rank_sample * num_entities dot products (FB15k-237: 2 000 triples ~ 0.6 G multiply-adds).
"""

from __future__ import annotations

import random
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.transforms import RandomLinkSplit
from torch_geometric.utils import degree, negative_sampling, to_undirected

from graphnetz.data.feature_rules import ALL_EDGE_RULES, node_features
from graphnetz.task_types import RELATIONAL_LINK
from graphnetz.tasks.base import SPLITS, GraphTask, TaskData
from graphnetz.tasks.minibatch import MiniBatchSteps, check_batch_size
from graphnetz.tasks.node_tasks import full_batch_loader, require_attributes

FEATURE_RULE = "[1, log(1 + degree in the training graph)] (graph has no node features)"
RANK_MARK = -1.0  # target value marking a rank (not an edge label) in predict_splits' output
HITS = (1, 3, 10)


def training_degree_features(edge_index: Tensor, num_nodes: int) -> Tensor:
    deg = degree(edge_index[0], num_nodes)
    return torch.stack([torch.ones_like(deg), torch.log1p(deg)], dim=1)


@contextmanager
def seeded(seed: int):
    """Run a block under ``seed`` for torch and python's ``random`` (which
    ``negative_sampling`` draws from), leaving the callers' generators untouched."""
    state = random.getstate()
    random.seed(seed)
    try:
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            yield
    finally:
        random.setstate(state)


def plain_link_split(data: Data, seed: int, split: dict | None) -> tuple[Data, dict]:
    """One graph with message-passing edges and labelled edges per split (seeded)."""
    # ``dataset.split.link`` holds the edge fractions; the rest of dataset.split is for nodes
    link = (split or {}).get("link") or {}
    num_val, num_test = link.get("val", 0.05), link.get("test", 0.1)
    transform = RandomLinkSplit(
        num_val=num_val, num_test=num_test, is_undirected=True, add_negative_train_samples=False
    )
    base = Data(edge_index=data.edge_index, num_nodes=data.num_nodes)
    with seeded(seed):
        train, val, test = transform(base)
        # fixed negatives to score the training split each epoch (training draws fresh ones)
        train_neg = negative_sampling(
            train.edge_index, data.num_nodes, train.edge_label_index.size(1)
        )
    empty = [name for name, part in (("val", val), ("test", test)) if part.edge_label.numel() == 0]
    if empty:
        raise ValueError(
            f"the {' and '.join(empty)} split of the link split has no edge (val {num_val:g}, "
            f"test {num_test:g} of {base.edge_index.size(1) // 2} undirected edges): link "
            "prediction selects and reports on both; raise dataset.split.link.val / test, "
            "or use a graph with more edges"
        )
    x = getattr(data, "x", None)
    feature_note = getattr(data, "feature_note", None)
    rule = getattr(data, "feature_rule", None)  # dataset.features names a rule
    if x is None and rule is not None:
        edges = data.edge_index if rule in ALL_EDGE_RULES else train.edge_index
        x, feature_note = node_features(rule, edges, data.num_nodes)
    elif x is None:
        x, feature_note = training_degree_features(train.edge_index, data.num_nodes), FEATURE_RULE
    graph = Data(
        x=x.float(),
        edge_index=train.edge_index,
        num_nodes=data.num_nodes,
        train_pos=train.edge_label_index,
    )
    graph.train_label_index = torch.cat([train.edge_label_index, train_neg], dim=1)
    n_pos = train.edge_label_index.size(1)
    graph.train_label = torch.cat([torch.ones(n_pos), torch.zeros(train_neg.size(1))])
    for name, part in (("val", val), ("test", test)):
        graph[f"{name}_label_index"], graph[f"{name}_label"] = (
            part.edge_label_index,
            part.edge_label,
        )
    info = {
        "split": f"RandomLinkSplit val {num_val:g} test {num_test:g} (seed {seed}); "
        "message passing on training edges only",
        "num_nodes": int(data.num_nodes),
        "num_mp_edges": int(train.edge_index.size(1)),
        **{f"n_{s}_pos": int(graph[f"{s}_label"].sum()) for s in SPLITS},
    }
    if feature_note:
        info["features"] = feature_note
    return graph, info


class TripleIndex:
    """Known triples sorted by (entity, relation) key, to filter rankings without a loop.

    A graph attribute that is not a tensor, so moving the graph to a GPU leaves it where
    it was built: :meth:`answers` answers on the device of its query, keeping one copy of
    the index per device it was asked on."""

    def __init__(self, query: Tensor, relation: Tensor, answer: Tensor, num_relations: int):
        key = query * num_relations + relation
        self.key, order = key.sort()
        self.answer = answer[order]
        self.num_relations = num_relations
        self._copies = {self.key.device: (self.key, self.answer)}

    def answers(self, query: Tensor, relation: Tensor) -> tuple[Tensor, Tensor]:
        """(row, answer) pairs: every known answer of each (query, relation) row."""
        sorted_keys, sorted_answers = self._on(query.device)
        key = query * self.num_relations + relation
        lo = torch.searchsorted(sorted_keys, key)
        hi = torch.searchsorted(sorted_keys, key, right=True)
        counts = hi - lo
        rows = torch.repeat_interleave(torch.arange(len(key), device=key.device), counts)
        starts = torch.repeat_interleave(lo - torch.cumsum(counts, 0) + counts, counts)
        within = torch.arange(int(counts.sum()), device=key.device)
        return rows, sorted_answers[starts + within]

    def _on(self, device: torch.device) -> tuple[Tensor, Tensor]:
        if device not in self._copies:
            self._copies[device] = (self.key.to(device), self.answer.to(device))
        return self._copies[device]


def corrupt(triples: Tensor, num_nodes: int, generator: torch.Generator | None = None) -> Tensor:
    """Replace the head or the tail (each with probability 1/2) by a uniform entity, drawn
    on the triples' device (``generator``, if given, must be of that device)."""
    heads, tails = triples[0].clone(), triples[1].clone()
    size, device = (triples.size(1),), triples.device
    random = torch.randint(num_nodes, size, generator=generator, device=device)
    side = torch.rand(size, generator=generator, device=device) < 0.5
    heads[side], tails[~side] = random[side], random[~side]
    return torch.stack([heads, tails])


def relational_split(data: Data, seed: int) -> tuple[Data, dict]:
    require_attributes(data, ("edge_type", "train_mask", "val_mask", "test_mask"), "link_pred")
    n = int(data.num_nodes)
    num_relations = int(getattr(data, "num_relations", int(data.edge_type.max()) + 1))
    generator = torch.Generator().manual_seed(seed)
    graph = Data(num_nodes=n, num_relations=num_relations)
    mask_train = data.train_mask
    graph.edge_index = to_undirected(data.edge_index[:, mask_train], num_nodes=n)
    graph.train_triples, graph.train_type = (
        data.edge_index[:, mask_train],
        data.edge_type[mask_train],
    )
    for name in SPLITS:
        mask = data[f"{name}_mask"]
        pos, rel = data.edge_index[:, mask], data.edge_type[mask]
        graph[f"{name}_label_index"] = torch.cat([pos, corrupt(pos, n, generator)], dim=1)
        graph[f"{name}_label_type"] = torch.cat([rel, rel])
        graph[f"{name}_label"] = torch.cat([torch.ones(pos.size(1)), torch.zeros(pos.size(1))])
        # a seeded order; the task ranks its first ``rank_sample`` triples
        order = torch.randperm(pos.size(1), generator=generator)
        graph[f"{name}_rank_triples"], graph[f"{name}_rank_type"] = pos[:, order], rel[order]
    # filters over every known triple: tails given (head, r) and heads given (tail, r)
    graph.tail_index = TripleIndex(
        data.edge_index[0], data.edge_type, data.edge_index[1], num_relations
    )
    graph.head_index = TripleIndex(
        data.edge_index[1], data.edge_type, data.edge_index[0], num_relations
    )
    info = {
        "split": "predefined train/valid/test triples",
        "num_nodes": n,
        "num_relations": num_relations,
        "num_mp_edges": int(graph.edge_index.size(1)),
        **{f"n_{s}_triples": int(data[f"{s}_mask"].sum()) for s in SPLITS},
        "features": "learned entity embeddings (no node features in knowledge graphs)",
        "ranking": "filtered, against all entities, both directions (task.rank_sample)",
    }
    return graph, info


def ranking_metrics(ranks: Tensor) -> dict[str, float]:
    ranks = ranks.float()
    return {
        "mrr": float((1.0 / ranks).mean()),
        **{f"hits{k}": float((ranks <= k).float().mean()) for k in HITS},
    }


#: Training negatives of plain graphs: ``fresh`` draws new ones every epoch (the default);
#: ``fixed`` trains on the one set drawn at the split (``+task.negatives=fixed``), as
#: ``RandomLinkSplit(add_negative_train_samples=True)`` setups do (the reference package).
NEGATIVES = ("fresh", "fixed")


class LinkPredictionTask(MiniBatchSteps, GraphTask):
    """BCE with negative sampling, ROC-AUC (primary) and AP; relational: MRR (primary), Hits@k."""

    task_type = "link_pred"
    primary_metric = "auc"
    direction = "max"

    def __init__(
        self,
        model,
        *,
        batch_size: int,
        rank_sample: int | None,
        negatives: str = "fresh",
        **hyperparameters,
    ) -> None:
        if negatives not in NEGATIVES:
            raise ValueError(f"task.negatives must be one of {list(NEGATIVES)}, got {negatives!r}")
        super().__init__(model, **hyperparameters)
        self.negatives = negatives
        self.batch_size = check_batch_size(batch_size)
        self.automatic_optimization = False
        if rank_sample is not None and (isinstance(rank_sample, bool) or rank_sample < 1):
            raise ValueError(
                f"task.rank_sample must be a positive integer or null (all), got {rank_sample!r}"
            )
        self.rank_sample = rank_sample

    @classmethod
    def prepare(cls, dataset, seed: int, split: dict | None = None) -> TaskData:
        data = dataset if hasattr(dataset, "edge_index") else dataset[0]
        require_attributes(data, ("edge_index",), cls.task_type)
        if getattr(data, "edge_type", None) is not None:
            graph, info = relational_split(data, seed)
            extras = {"num_nodes": graph.num_nodes, "num_relations": graph.num_relations}
            in_channels = 0  # the relational adapter learns its own entity embeddings
        else:
            graph, info = plain_link_split(data, seed, split)
            extras, in_channels = {}, int(graph.x.size(1))
        loader = full_batch_loader(graph)
        return TaskData(
            loader,
            [loader],
            in_channels,
            1,
            extras=extras,
            info=info,
            graph=graph,
            primary_metric="mrr" if extras else None,
            level=RELATIONAL_LINK if extras else None,
        )

    @staticmethod
    def relational(graph) -> bool:
        return "train_triples" in graph

    def encode(self, graph) -> Tensor:
        return self.model.encode(getattr(graph, "x", None), graph.edge_index)

    def minibatch_losses(self, graph):
        if not self.relational(graph):
            z = self.encode(graph)  # full batch: one step per epoch
            pos = graph.train_pos
            if self.negatives == "fixed":  # the split's own negatives, the same every epoch
                neg = graph.train_label_index[:, pos.size(1) :]
            else:
                neg = negative_sampling(graph.edge_index, graph.num_nodes, pos.size(1))
            yield self.bce(z, pos, neg)
            return
        triples, types = graph.train_triples, graph.train_type
        for chunk in torch.randperm(triples.size(1)).split(self.batch_size):
            z = self.encode(graph)
            pos, rel = triples[:, chunk], types[chunk]
            yield self.bce(z, pos, corrupt(pos, graph.num_nodes), rel)

    def bce(self, z: Tensor, pos: Tensor, neg: Tensor, rel: Tensor | None = None) -> Tensor:
        logits = torch.cat([self.model.decode(z, pos, rel), self.model.decode(z, neg, rel)])
        labels = torch.cat([torch.ones(pos.size(1)), torch.zeros(neg.size(1))]).to(logits)
        return F.binary_cross_entropy_with_logits(logits, labels)

    def predict_splits(self, graph, dataloader_idx: int = 0):
        z = self.encode(graph)
        out = {}
        for split in SPLITS:
            rel = getattr(graph, f"{split}_label_type", None)
            logits = self.model.decode(z, graph[f"{split}_label_index"], rel)
            labels = graph[f"{split}_label"]
            if self.relational(graph):
                # ranks ride along with the edge scores, marked by target RANK_MARK
                ranks = self.filtered_ranks(z, graph, split)
                logits = torch.cat([logits, ranks])
                labels = torch.cat([labels, torch.full_like(ranks, RANK_MARK)])
            out[split] = (logits, labels)
        return out

    def filtered_ranks(self, z: Tensor, graph, split: str, chunk: int = 1024) -> Tensor:
        keep = slice(None) if self.rank_sample is None else slice(0, self.rank_sample)
        triples, types = graph[f"{split}_rank_triples"][:, keep], graph[f"{split}_rank_type"][keep]
        ranks = []
        # tails given (head, r), then heads given (tail, r): DistMult scores are symmetric
        for query, answer, index in (
            (triples[0], triples[1], graph.tail_index),
            (triples[1], triples[0], graph.head_index),
        ):
            for part in torch.arange(len(query)).split(chunk):
                scores = self.model.score_all_tails(z, query[part], types[part])
                target = scores.gather(1, answer[part].view(-1, 1))
                rows, known = index.answers(query[part], types[part])
                scores[rows, known] = -torch.inf  # filter known triples (the target too)
                greater = (scores > target).sum(1)
                ties = (scores == target).sum(1)
                ranks.append(1.0 + greater + 0.5 * ties)
        return torch.cat(ranks).float()

    def score(self, preds: Tensor, targets: Tensor) -> dict[str, float]:
        is_rank = targets == RANK_MARK
        logits, labels = preds[~is_rank], targets[~is_rank].long()
        # Imported here: torchmetrics brings scipy.signal and matplotlib (about a second),
        # which runs of other task types need not pay.
        from torchmetrics.functional.classification import (
            binary_auroc,
            binary_average_precision,
        )

        metrics = {
            "auc": float(binary_auroc(logits, labels)),
            "ap": float(binary_average_precision(logits, labels)),
        }
        if is_rank.any():
            metrics.update(ranking_metrics(preds[is_rank]))
        return metrics
