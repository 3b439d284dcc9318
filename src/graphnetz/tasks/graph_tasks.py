"""Graph-level tasks on a set of graphs: classification (graph_cls), multi-label
classification (ml_graph_cls) and regression (graph_reg).

Split: the dataset's canonical one when it ships it (a ``{"train", "val", "test"}`` dict of
graph lists, e.g. ZINC), else a seeded 80/10/10 permutation per run (``dataset.split``
may change the fractions). Training is mini-batched (``task.batch_size``, default 32),
shuffled as torch_geometric's DataLoader does and cut from the split collated once
(:mod:`graphnetz.tasks.graph_batching`); every epoch evaluates train, val and test.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Dataset
from torch_geometric.loader import DataLoader

from graphnetz.data.splits import random_node_split
from graphnetz.tasks.base import SPLITS, GraphTask, TaskData
from graphnetz.tasks.graph_batching import SplitBatcher, same_graphs
from graphnetz.tasks.minibatch import MiniBatchSteps, check_batch_size
from graphnetz.tasks.multilabel_metrics import METRIC_KEYS, multilabel_metrics, prior_macro_ap
from graphnetz.tasks.node_tasks import accuracy, full_batch_loader, require_attributes

EVAL_BATCH_SIZE = 256  # evaluation only: any size gives the same metrics


def graph_split(dataset, seed: int, split: dict | None) -> tuple[dict[str, list], dict]:
    """Graphs per split: the canonical split if the dataset has one, else a seeded one."""
    if isinstance(dataset, dict):
        missing = [s for s in SPLITS if s not in dataset]
        if missing:
            raise ValueError(
                f"a canonical graph split needs keys {list(SPLITS)}; missing {missing}"
            )
        return {s: _own_graphs(dataset[s]) for s in SPLITS}, {"split": "canonical"}
    split = split or {}
    kind = split.get("type", "random")
    if kind != "random":
        raise ValueError(
            f"dataset.split.type={kind!r} needs a dataset with a canonical "
            "split (a train/val/test dict); valid here: 'random'"
        )
    train_frac, val_frac = split.get("train", 0.8), split.get("val", 0.1)
    masks = random_node_split(len(dataset), seed, train_frac, val_frac)
    graphs = _own_graphs(dataset)
    parts = {
        s: [graphs[i] for i in m.nonzero().view(-1).tolist()]
        for s, m in zip(SPLITS, masks, strict=True)
    }
    return parts, {
        "split": f"random {train_frac:g}/{val_frac:g}/{1 - train_frac - val_frac:g} (seed {seed})"
    }


def _own_graphs(graphs: Iterable) -> list:
    """The run's own graph objects: Lightning moves a split to a GPU by each graph's
    ``.to``, which PyG does in place, so a plain list from the process's dataset cache
    must not hand over the cached objects (a PyG ``Dataset`` returns copies already)."""
    if isinstance(graphs, Dataset):
        return list(graphs)
    return [copy.copy(g) for g in graphs]


class GraphLevelTask(MiniBatchSteps, GraphTask):
    """Shared mechanics: a model ``(x, edge_index, batch) -> [num_graphs, out]``."""

    def __init__(self, model, *, batch_size: int, **hyperparameters) -> None:
        super().__init__(model, **hyperparameters)
        self.batch_size = check_batch_size(batch_size)
        self.automatic_optimization = False
        #: dataloader_idx -> (the split's graphs, their evaluation batches): evaluation
        #: batches are the same every epoch (no shuffling), so they are collated once.
        self._eval_batches: dict[int, tuple[list, list]] = {}
        self._train_batcher: SplitBatcher | None = None

    @classmethod
    def prepare(cls, dataset, seed: int, split: dict | None = None) -> TaskData:
        parts, info = graph_split(dataset, seed, split)
        for name, graphs in parts.items():
            if not graphs:
                raise ValueError(
                    f"the {name} split of the dataset is empty; use a larger dataset "
                    "or other dataset.split fractions"
                )
        require_attributes(parts["train"][0], ("x", "edge_index", "y"), cls.task_type)
        first = parts["train"][0]
        loaders = [full_batch_loader(parts[s]) for s in SPLITS]
        info.update({f"n_{s}": len(parts[s]) for s in SPLITS})
        if getattr(first, "feature_note", None):
            info["features"] = first.feature_note
        return TaskData(
            loaders[0],
            loaders,
            int(first.x.size(-1)),
            cls.num_outputs([g for graphs in parts.values() for g in graphs]),
            info=info,
        )

    @staticmethod
    def num_outputs(graphs: list) -> int:
        raise NotImplementedError

    def forward_batch(self, batch) -> Tensor:
        return self.model(batch.x.float(), batch.edge_index, batch.batch)

    def minibatch_losses(self, graphs):
        batcher = self._train_batcher
        if batcher is None or not batcher.serves(graphs):  # the split collated once
            batcher = self._train_batcher = SplitBatcher(graphs, self.batch_size)
        for batch in batcher:
            yield self.loss(self.forward_batch(batch), self.targets(batch))

    def evaluation_batches(self, graphs, dataloader_idx: int) -> list:
        """The split's evaluation batches, collated once while its graphs stay the same."""
        cached = self._eval_batches.get(dataloader_idx)
        if cached is None or not same_graphs(cached[0], graphs):
            # A private generator: a DataLoader iterator draws a base seed, which must
            # not come from the global stream when only some epochs collate (resumed runs).
            loader = DataLoader(graphs, batch_size=EVAL_BATCH_SIZE, generator=torch.Generator())
            # Collated as normal tensors even inside the evaluation's inference mode: they
            # keep a version counter, so the models' graph caches can key on them.
            with torch.inference_mode(False):
                batches = list(loader)
            cached = self._eval_batches[dataloader_idx] = (list(graphs), batches)
        return cached[1]

    def predict_splits(self, graphs, dataloader_idx: int = 0):
        outs, ys = [], []
        for batch in self.evaluation_batches(graphs, dataloader_idx):
            outs.append(self.forward_batch(batch))
            ys.append(self.targets(batch))
        return {SPLITS[dataloader_idx]: (torch.cat(outs), torch.cat(ys))}


class GraphClassificationTask(GraphLevelTask):
    """Cross-entropy, accuracy (higher is better)."""

    task_type = "graph_cls"
    primary_metric = "accuracy"
    direction = "max"

    @staticmethod
    def num_outputs(graphs: list) -> int:
        return int(max(int(g.y.max()) for g in graphs)) + 1

    def targets(self, batch) -> Tensor:
        return batch.y.view(-1).long()

    def loss(self, logits: Tensor, y: Tensor) -> Tensor:
        return F.cross_entropy(logits, y)

    def score(self, logits: Tensor, y: Tensor) -> dict[str, float]:
        return {"accuracy": accuracy(logits, y)}


class MultiLabelGraphClassificationTask(GraphLevelTask):
    """Multi-label graph classification: C binary labels per graph (``y`` of shape
    ``[1, C]``, NaN where a label was not measured), macro AP primary (higher is better).

    Loss: BCE with logits over the labelled entries of the batch only (their mean); a NaN
    target adds nothing to the loss or its gradient. Scores
    (:func:`graphnetz.tasks.multilabel_metrics.multilabel_metrics`, with
    ``require_both_classes``): ``macro_ap`` (primary), ``macro_auroc``, ``micro_f1``,
    ``macro_f1`` (probability >= 0.5 is positive) and the top-k F1 pair. Every metric
    ignores NaN targets; the macro averages keep only the labels with a positive *and* a
    negative labelled graph in the split (the OGB / LRGB evaluators' rule for AP), so a
    label without a positive in the split counts in none of them; ``micro_f1`` pools the
    labelled entries of every label.
    """

    task_type = "ml_graph_cls"
    primary_metric = "macro_ap"
    direction = "max"

    @staticmethod
    def num_outputs(graphs: list) -> int:
        shapes = {tuple(g.y.shape) for g in graphs}
        if len(shapes) != 1 or len(first := next(iter(shapes))) != 2 or first[0] != 1:
            raise ValueError(
                "ml_graph_cls needs y of shape [1, C] on every graph (C binary labels, NaN "
                f"where missing), got shapes {sorted(shapes)[:3]}"
            )
        return int(first[1])

    @classmethod
    def chance_level(cls, data: TaskData) -> dict[str, Any]:
        test_graphs = next(iter(data.eval_loaders[SPLITS.index("test")]))
        target = torch.cat([g.y.view(1, -1).float() for g in test_graphs])
        return {
            "metric": "macro_ap",
            "split": "test",
            "rule": "constant score",
            "value": prior_macro_ap(target, require_both_classes=True),
        }

    def targets(self, batch) -> Tensor:
        return batch.y.view(batch.num_graphs, -1).float()

    def loss(self, logits: Tensor, y: Tensor) -> Tensor:
        labelled = ~y.isnan()
        if not bool(labelled.any()):  # a batch without a single measured label
            return logits.sum() * 0.0
        return F.binary_cross_entropy_with_logits(logits[labelled], y[labelled])

    def score(self, logits: Tensor, y: Tensor) -> dict[str, float]:
        scores = multilabel_metrics(logits, y, require_both_classes=True)
        return {key: scores[key] for key in METRIC_KEYS}


class GraphRegressionTask(GraphLevelTask):
    """L1 loss, mean absolute error (lower is better; RMSE also recorded)."""

    task_type = "graph_reg"
    primary_metric = "mae"
    direction = "min"

    @staticmethod
    def num_outputs(graphs: list) -> int:
        return int(graphs[0].y.numel())

    def targets(self, batch) -> Tensor:
        return batch.y.view(batch.num_graphs, -1).float()

    def loss(self, out: Tensor, y: Tensor) -> Tensor:
        return F.l1_loss(out, y)

    def score(self, out: Tensor, y: Tensor) -> dict[str, float]:
        return regression_errors(out, y)


def regression_errors(out: Tensor, y: Tensor) -> dict[str, float]:
    """MAE and RMSE over every entry, summed then divided by the count: torchmetrics'
    ``mean_absolute_error`` / ``mean_squared_error(squared=False)`` operation for
    operation (bit-identical, tested), without importing torchmetrics."""
    if out.shape != y.shape:
        raise RuntimeError(f"predictions {tuple(out.shape)} and targets {tuple(y.shape)} differ")
    diff = out.reshape(-1) - y.reshape(-1)
    n = diff.shape[0]
    return {
        "mae": float(torch.sum(torch.abs(diff), dim=0) / n),
        "rmse": float(torch.sqrt(torch.sum(diff * diff, dim=0) / n)),
    }
