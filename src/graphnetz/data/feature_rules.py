"""Node features of featureless graphs, named by the dataset config's ``features`` value.

A dataset config's ``features`` is either a human description of the features its data
carries ("given: bag-of-words"), or, for a graph without node features, the name of the
rule that builds them:

- ``reference``: one-hot node ids when N <= 8 192, else the ``degree`` rule (the
  reference design's rule; an N x N identity beyond that would not fit in memory);
- ``degree``: ``[d, d^2, 1]`` with ``d = log1p(degree) / log N`` (N >= 2);
- ``constant``: one feature, 1 for every node;
- ``reference_all_edges``: the ``reference`` rule with the degrees of every edge, held-out
  ones included, as the reference package computes them when it loads a graph. On link
  prediction this leaks the validation and test edges into the features (each raises the
  degree of both its endpoints): it exists to reproduce the reference's numbers, never
  as a protocol.

Degrees are those of the graph the task trains on: link prediction passes its training
edges (:mod:`graphnetz.tasks.link_tasks`), so held-out edges never shape the features
(except under ``reference_all_edges``); node-level tasks see the whole graph, so theirs
come from every edge.
"""

from __future__ import annotations

import copy
import math
import re

import torch
from torch import Tensor
from torch_geometric.utils import degree

ONE_HOT_LIMIT = 8192
FEATURE_RULES = ("reference", "degree", "constant", "reference_all_edges")
#: Rules whose degrees count every edge of the graph, on link prediction too.
ALL_EDGE_RULES = ("reference_all_edges",)
_RULE_LIKE = re.compile(r"^[a-z_]+$")  # a single word; descriptions have spaces or colons


def check_rule(value) -> str | None:
    """``value`` if it names a rule, None if it is a description; a one-word value that
    names no rule is an error (a misspelt rule must not pass as a description)."""
    if not isinstance(value, str) or not _RULE_LIKE.match(value):
        return None
    if value not in FEATURE_RULES:
        raise ValueError(
            f"dataset.features={value!r} is no feature rule; valid rules: "
            f"{list(FEATURE_RULES)} (or a description with spaces, for data with features)"
        )
    return value


def degree_features(edge_index: Tensor, num_nodes: int) -> Tensor:
    d = torch.log1p(degree(edge_index[0], num_nodes)) / math.log(max(num_nodes, 2))
    return torch.stack([d, d * d, torch.ones_like(d)], dim=1)


def node_features(rule: str, edge_index: Tensor, num_nodes: int) -> tuple[Tensor, str]:
    """The features of ``rule`` over ``edge_index`` (both directions), and a note saying which."""
    check_rule(rule)
    if rule == "constant":
        return torch.ones(num_nodes, 1), "constant: 1 for every node"
    if rule in ("reference", "reference_all_edges") and num_nodes <= ONE_HOT_LIMIT:
        return torch.eye(
            num_nodes
        ), f"{rule}: one-hot node ids (N = {num_nodes} <= {ONE_HOT_LIMIT})"
    counted = (
        "degrees of every edge, held-out ones included"
        if rule in ALL_EDGE_RULES
        else "degrees of the training graph"
    )
    note = f"[log1p(deg)/log N, its square, 1], {counted}"
    return degree_features(edge_index, num_nodes), f"{rule}: {note}"


def with_feature_rule(dataset, value, name: str, *, splits_edges: bool):
    """``dataset`` with the rule ``value`` names (a copy: the loaded one is cached), or
    ``dataset`` itself when ``value`` describes features the data carries.

    ``splits_edges`` (link prediction): the copy is only marked (``feature_rule``), and the
    task builds the features from its training edges. Otherwise (node-level tasks see the
    whole graph) the copy gets ``x`` over all edges now.
    """
    rule = check_rule(value)
    if rule is None:
        return dataset
    if not hasattr(dataset, "edge_index"):
        raise ValueError(
            f"dataset.features={rule!r}: feature rules apply to single-graph datasets, "
            f"and {name!r} holds several graphs"
        )
    x = getattr(dataset, "x", None)
    if x is not None:
        raise ValueError(
            f"dataset.features={rule!r} names a rule for featureless graphs, but {name!r} "
            f"has node features (width {x.size(-1)}); describe them in words instead"
        )
    marked = copy.copy(dataset)
    if splits_edges:
        marked.feature_rule = rule
    else:
        marked.x, note = node_features(rule, dataset.edge_index, int(dataset.num_nodes))
        marked.feature_note = note.replace("degrees of the training graph", "degrees of the graph")
    return marked
