"""Full-batch node-level tasks on one graph: single-label (node_cls) and multi-label (ml_node_cls)."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.utils.data import DataLoader

from graphnetz.data.splits import random_node_split, split_spec
from graphnetz.models.contract import capabilities
from graphnetz.models.dgi import pretrain_node_encoder
from graphnetz.tasks.base import GraphTask, TaskData
from graphnetz.tasks.multilabel_metrics import METRIC_KEYS, multilabel_metrics, prior_macro_ap

MASKS = ("train_mask", "val_mask", "test_mask")


def accuracy(logits: Tensor, y: Tensor) -> float:
    """Share of rows whose arg-max class is the label: torchmetrics' micro
    ``multiclass_accuracy`` (same float32 count / total), without its per-call input
    validation, which cost more than the whole evaluation on small graphs."""
    return float((logits.argmax(-1) == y).float().mean())


def _first(batch: list) -> Any:
    return batch[0]


class FullBatchLoader(DataLoader):
    """``DataLoader([graph], batch_size=1, collate_fn=_first)``, yielding the whole graph
    once per epoch; DataLoader's own constructor, so Lightning can rebuild it.

    Its iterator draws from the global generator the base seed a ``DataLoader``
    iterator draws (so the random stream is the same) and yields the graph, without
    building torch's iterator object, which costs more than a small graph's epoch of
    framework work (about 20 us, twice an epoch)."""

    def __iter__(self):
        torch.empty((), dtype=torch.int64).random_(generator=self.generator)
        return iter(self.dataset)


def full_batch_loader(graph) -> DataLoader:
    """A loader yielding the whole graph once per epoch (full-batch training)."""
    return FullBatchLoader([graph], batch_size=1, collate_fn=_first)


def require_attributes(data, names, task_type: str) -> None:
    missing = [n for n in names if getattr(data, n, None) is None]
    if missing:
        present = sorted(k for k in data.keys()) if hasattr(data, "keys") else []
        raise ValueError(
            f"dataset for task {task_type!r} misses attribute(s) {missing}; "
            f"it has {present}. Add them to the Data object (or choose another task type)."
        )


def node_split(data, seed: int, split: dict | None, task_type: str):
    """The dataset's masks (column ``seed % K`` of [N, K] masks), else a seeded random split.

    ``split`` comes from the dataset config: ``{"type": "random", "train": .6, "val": .2}``
    asks for a seeded split even when masks exist; None uses the masks and requires them.
    """
    # a shallow copy: the masks and labels set below are the copy's, the tensors are
    # the process's cached dataset's, which nothing modifies in place (copying Cora's
    # 15 MB took 7 ms a run, and a new feature tensor defeated the per-tensor caches)
    data = copy.copy(data)
    split = split_spec(split)
    if split and split.get("type", "canonical") == "random":
        data.train_mask, data.val_mask, data.test_mask = random_node_split(
            data.num_nodes, seed, split.get("train", 0.6), split.get("val", 0.2)
        )
        return data, {"split": f"random (seed {seed})"}
    require_attributes(data, MASKS, task_type)
    info = {"split": "canonical"}
    if data.train_mask.dim() == 2:
        k = data.train_mask.size(1)
        column = seed % k
        for name in MASKS:
            setattr(data, name, getattr(data, name)[:, column])
        info = {"split": f"predefined split {column} of {k} (seed % {k})"}
    return data, info


class NodeTask(GraphTask):
    """Shared full-batch mechanics; subclasses give loss and scores."""

    label_dtype: ClassVar[torch.dtype]

    @classmethod
    def prepare(cls, dataset, seed: int, split: dict | None = None) -> TaskData:
        data = dataset[0] if not hasattr(dataset, "edge_index") else dataset
        require_attributes(data, ("x", "edge_index", "y"), cls.task_type)
        data, info = node_split(data, seed, split, cls.task_type)
        data.y = data.y.to(cls.label_dtype)
        sizes = {m.split("_")[0]: int(getattr(data, m).sum()) for m in MASKS}
        empty = [name for name, size in sizes.items() if size == 0]
        if empty:
            raise ValueError(
                f"the {' and '.join(empty)} split of the {info['split']} node split has no "
                f"node (sizes {sizes}): training selects and reports on all three; give each "
                "a share (dataset.split.train / val, the test split gets the rest)"
            )
        loader = full_batch_loader(data)
        info.update(
            num_nodes=int(data.num_nodes),
            num_edges=int(data.edge_index.size(1)),
            **{f"n_{name}": size for name, size in sizes.items()},
        )
        for note, key in (("feature_note", "features"), ("split_note", "split_note")):
            if getattr(data, note, None):
                info[key] = getattr(data, note)
        info.update(cls.describe_labels(data))
        return TaskData(
            loader, [loader], data.num_features, cls.num_outputs(data), info=info, graph=data
        )

    @staticmethod
    def num_outputs(data) -> int:
        raise NotImplementedError

    @staticmethod
    def describe_labels(data) -> dict:
        """Facts about the labels for the run record (none by default)."""
        return {}

    def training_loss(self, data) -> Tensor:
        caps = capabilities(self.model)
        # Models declaring ``computes_selected_nodes`` (LANC, H2GCN) return the train rows
        # only instead of computing every node's logits and discarding most of them.
        if caps.computes_selected_nodes:
            out = self.model(data.x, data.edge_index, output_nodes=data.train_mask)
        else:
            out = self.model(data.x, data.edge_index)[data.train_mask]
        loss = self.loss(out, data.y[data.train_mask])
        if caps.adds_loss:
            loss = loss + self.model.extra_loss(data, data.train_mask)
        return loss

    def predict_splits(self, data, dataloader_idx: int = 0):
        out = self.model(data.x, data.edge_index)
        return {
            split: (out[data[f"{split}_mask"]], data.y[data[f"{split}_mask"]])
            for split in ("train", "val", "test")
        }


class NodeClassificationTask(NodeTask):
    """Single-label node classification: cross-entropy, accuracy."""

    task_type = "node_cls"
    primary_metric = "accuracy"
    direction = "max"
    label_dtype = torch.long

    def __init__(self, model, *, dgi_pretrain_epochs: int = 0, **hyperparameters) -> None:
        super().__init__(model, **hyperparameters)
        if (
            isinstance(dgi_pretrain_epochs, bool)
            or not isinstance(dgi_pretrain_epochs, int)
            or dgi_pretrain_epochs < 0
        ):
            raise ValueError(
                f"task.dgi_pretrain_epochs must be an integer >= 0 (0 = off), "
                f"got {dgi_pretrain_epochs!r}"
            )
        self.dgi_pretrain_epochs = dgi_pretrain_epochs

    def on_train_start(self) -> None:
        # Optional: pre-train the encoder's hidden layers with Deep Graph Infomax (no labels);
        # a resumed run restored weights that were pre-trained already.
        if self.dgi_pretrain_epochs and not self.resumed:
            graph = next(iter(self.trainer.train_dataloader))
            pretrain_node_encoder(
                self.model,
                graph,
                self.dgi_pretrain_epochs,
                lr=self.lr,
                seed=torch.initial_seed() % 2**32,
            )

    @staticmethod
    def num_outputs(data) -> int:
        return int(data.y.max()) + 1

    @classmethod
    def chance_level(cls, data: TaskData) -> dict[str, Any]:
        graph = data.graph
        train, test = graph.y[graph.train_mask], graph.y[graph.test_mask]
        majority = int(torch.bincount(train).argmax()) if train.numel() else 0
        value = float((test == majority).float().mean()) if test.numel() else float("nan")
        return {
            "metric": "accuracy",
            "split": "test",
            "rule": "majority training class",
            "value": value,
        }

    def loss(self, logits: Tensor, y: Tensor) -> Tensor:
        return F.cross_entropy(logits, y)

    def score(self, logits: Tensor, y: Tensor) -> dict[str, float]:
        if y.numel() == 0:
            return {"accuracy": float("nan")}
        return {"accuracy": accuracy(logits, y)}


class MultiLabelNodeClassificationTask(NodeTask):
    """Multi-label node classification: BCE with logits over C labels, macro AP primary.

    Scores follow :mod:`graphnetz.tasks.multilabel_metrics` (labels without a positive in a
    split are excluded from macro averages and counted; F1 thresholds probabilities at 0.5).
    """

    task_type = "ml_node_cls"
    primary_metric = "macro_ap"
    direction = "max"
    label_dtype = torch.float

    @staticmethod
    def num_outputs(data) -> int:
        if data.y.dim() != 2:
            raise ValueError(
                f"ml_node_cls needs y of shape [N, C] (0/1 label sets), got {tuple(data.y.shape)}"
            )
        return int(data.y.size(1))

    def loss(self, logits: Tensor, y: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(logits, y)

    @classmethod
    def chance_level(cls, data: TaskData) -> dict[str, Any]:
        graph = data.graph
        return {
            "metric": "macro_ap",
            "split": "test",
            "rule": "constant score",
            "value": prior_macro_ap(graph.y[graph.test_mask]),
        }

    @staticmethod
    def describe_labels(data) -> dict:
        """Labels without a positive node per split: excluded from that split's macro scores."""
        return {
            f"labels_without_positives_{split}": int(
                (data.y[data[f"{split}_mask"]].sum(0) == 0).sum()
            )
            for split in ("train", "val", "test")
        }

    def score(self, logits: Tensor, y: Tensor) -> dict[str, float]:
        scores = multilabel_metrics(logits, y)
        return {key: scores[key] for key in METRIC_KEYS}
