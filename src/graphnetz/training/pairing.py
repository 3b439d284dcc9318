"""The pairing fingerprint of a run: what a paired comparison with another model's run of
the same seed assumes both runs shared.

Two runs of one seed are a pair only if they trained and were evaluated on the same data:
the same dataset content, the same split (node ids, edge ids or graphs per split) and, for
link prediction, the same evaluation negatives. The fingerprint holds one digest of each
(``dataset``, ``split``, ``negatives`` where the task has them); the report compares them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import torch

from graphnetz.identity_memo import IdentityMemo
from graphnetz.tasks.base import TaskData

SPLITS = ("train", "val", "test")


def _update(h: Any, value: Any) -> None:
    """Feed a tensor (dtype, shape and bytes), a number, a string or a container into h."""
    if isinstance(value, torch.Tensor) and value.layout != torch.strided:  # sparse: its parts
        t = value.detach().cpu().to_sparse_coo().coalesce()
        h.update(f"sparse{t.dtype}{tuple(t.shape)}".encode())
        _update(h, [t.indices(), t.values()])
    elif isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, (list, tuple)):
        h.update(f"[{len(value)}".encode())
        for v in value:
            _update(h, v)
    elif isinstance(value, dict):
        for k in sorted(value, key=str):
            h.update(str(k).encode())
            _update(h, value[k])
    elif hasattr(value, "items") and hasattr(value, "keys"):  # a PyG Data object
        _update(h, {k: v for k, v in value.items() if isinstance(v, (torch.Tensor, int, float))})
    elif isinstance(value, (int, float, str, bool, range)) or value is None:
        h.update(repr(value).encode())


def digest(*values: Any) -> str:
    """A short content hash (BLAKE2b, 16 bytes) of tensors, graphs and containers."""
    h = hashlib.blake2b(digest_size=16)
    for v in values:
        _update(h, v)
    return h.hexdigest()


def dataset_content(dataset: Any) -> Any:
    """What to hash of a loaded dataset: the collated store of an in-memory dataset, each
    split of a canonical graph split, or the graphs themselves."""
    if isinstance(dataset, dict):
        return {k: dataset_content(v) for k, v in dataset.items()}
    if hasattr(dataset, "_data") and hasattr(dataset, "slices"):  # InMemoryDataset
        # a subset or shuffle of one shares the store and differs in its indices
        return [dataset._data, dataset.slices, getattr(dataset, "_indices", None)]
    if hasattr(dataset, "edge_index"):
        return dataset
    if isinstance(dataset, Iterable):
        return list(dataset)
    return dataset


def _node_ids(graph: Any) -> dict[str, torch.Tensor] | None:
    masks = [getattr(graph, f"{s}_mask", None) for s in SPLITS]
    if any(m is None for m in masks):
        return None
    return {s: m.nonzero().view(-1) for s, m in zip(SPLITS, masks, strict=True)}


def _link_parts(graph: Any) -> tuple[dict, dict] | None:
    """(positive edges per split, negative edges per split) of a link-prediction split."""
    if getattr(graph, "test_label_index", None) is None:
        return None
    pos, neg = {}, {}
    for s in SPLITS:
        index, label = graph[f"{s}_label_index"], graph[f"{s}_label"]
        pos[s] = index[:, label == 1]
        neg[s] = index[:, label == 0]
        for extra in (f"{s}_label_type", f"{s}_rank_triples", f"{s}_rank_type"):
            if getattr(graph, extra, None) is not None:
                pos[extra] = graph[extra]
    pos["message_passing"] = graph.edge_index
    return pos, neg


def _eval_graphs(data: TaskData) -> list:
    """The graphs of each evaluated split (graph-level tasks: one full-batch loader each)."""
    return [list(getattr(loader, "dataset", [])) for loader in data.eval_loaders]


class _Unversioned(Exception):
    """An inference tensor: it has no version that would tell a change."""


def _state(value: Any) -> Any:
    """What :func:`_update` reads from ``value``, with each tensor as its identity and
    version: equal states mean equal digests."""
    if isinstance(value, torch.Tensor):
        if value.is_inference():
            raise _Unversioned
        return (id(value), value._version)
    if isinstance(value, (list, tuple)):
        return tuple(_state(v) for v in value)
    if isinstance(value, dict):
        return tuple((str(k), _state(value[k])) for k in sorted(value, key=str))
    if hasattr(value, "items") and hasattr(value, "keys"):  # a PyG Data object
        return _state({k: v for k, v in value.items() if isinstance(v, (torch.Tensor, int, float))})
    return repr(value)


class _DatasetDigests:
    """The dataset digest of each loaded dataset object, kept while it lives: a sweep's
    runs share the process's cached dataset, and hashing Cora's 15 MB of features took a
    thirtieth of a run. An entry holds while the object holds the very same tensors, none
    modified since (identity and version), and the same other values, so a changed
    dataset is hashed again; objects that take no weak reference (a dict of splits) and
    inference tensors (no version) are hashed every time."""

    def __init__(self) -> None:
        self._memo = IdentityMemo()

    def __call__(self, dataset: Any) -> str:
        content = dataset_content(dataset)
        try:
            state = _state(content)
        except _Unversioned:
            return digest(content)
        value = self._memo.get(dataset, state)
        if value is None:
            value = digest(content)
            try:
                self._memo.put(dataset, value, state)
            except TypeError:  # takes no weak reference: hashed every time
                pass
        return value


_DATASET_DIGESTS = _DatasetDigests()


def pairing_fingerprint(dataset: Any, data: TaskData) -> dict[str, str]:
    """``{"dataset", "split"[, "negatives"]}`` digests of a run's data (see module doc)."""
    fingerprint = {"dataset": _DATASET_DIGESTS(dataset)}
    graph = data.graph
    link = _link_parts(graph) if graph is not None else None
    if link is not None:
        fingerprint["split"] = digest(link[0])
        fingerprint["negatives"] = digest(link[1])
    elif graph is not None and _node_ids(graph) is not None:
        fingerprint["split"] = digest(_node_ids(graph))
    else:
        fingerprint["split"] = digest(_eval_graphs(data))
    return fingerprint
