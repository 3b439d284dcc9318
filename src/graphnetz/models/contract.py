"""The model contract: what a model tells the pipeline about itself, declared in one place.

A model is any ``nn.Module`` a config's ``_target_`` builds as
``Cls(in_channels=..., out_channels=..., **config)`` whose ``forward(x, edge_index)`` returns
``[N, out_channels]`` (graph-level models: ``forward(x, edge_index, batch)`` returns
``[num_graphs, out_channels]``). A model whose ``forward(data)`` takes the PyG ``Data``
object instead (one required positional argument besides ``self``, not named ``x``, as in
the reference package) is called with a ``Data`` holding those tensors
(:class:`graphnetz.models.adapters.DataForward`). What else it can do it declares with the typed class
attributes and hooks of :class:`GraphModel`, as PyG's ``BasicGNN`` declares
``supports_edge_weight``. Our models inherit them; a module that does not (a third-party
class) gets the defaults. The pipeline reads a declaration only through
:func:`capabilities`, never with ``getattr`` of its own.

Worked example, a model for node tasks that ignores node features and precomputes from the
graph before training::

    class DegreeModel(GraphModel):
        task_types = frozenset({"node_cls", "ml_node_cls"})
        uses_node_features = False

        def __init__(self, in_channels, out_channels, hidden_channels=16):
            super().__init__()
            self.head = nn.Linear(1, out_channels)

        def precompute(self, graph, seed):
            self.degree = degree(graph.edge_index[0], graph.num_nodes).view(-1, 1)

        def forward(self, x, edge_index):
            return self.head(self.degree)

and ``conf/model/degree.yaml`` with ``name: degree`` and ``_target_: mypackage.DegreeModel``.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor, nn

from graphnetz.task_types import TASK_TYPES


class GraphModel(nn.Module):
    """Base of GraphNetz models: the typed declarations and hooks of the contract."""

    #: Task types the model serves (node encoders serve every type through adapters).
    task_types: ClassVar[frozenset[str]] = frozenset(TASK_TYPES)
    #: ``forward(x, edge_index, batch) -> [num_graphs, out]``: graph tasks use it as it is
    #: instead of pooling its node states.
    graph_level: ClassVar[bool] = False
    #: False when ``x`` is ignored (e.g. DeepWalk learns from walks only).
    uses_node_features: ClassVar[bool] = True
    #: ``forward(x, edge_index, output_nodes=mask)`` returns the rows of ``mask`` only, so
    #: training computes the training rows instead of every node's and discarding most.
    computes_selected_nodes: ClassVar[bool] = False

    def precompute(self, graph: Any, seed: int) -> None:
        """Graph-dependent work before training (walks, layouts); none by default."""

    def extra_loss(self, graph: Any, train_mask: Tensor) -> Tensor | None:
        """A term added to the task's training loss (e.g. label propagation's); None: none."""
        return None


@dataclass(frozen=True)
class Capabilities:
    """A model class's declarations; ``task_types`` None means undeclared (the run tries,
    and a failure is recorded as one)."""

    task_types: frozenset[str] | None
    graph_level: bool
    uses_node_features: bool
    computes_selected_nodes: bool
    precomputes: bool
    adds_loss: bool
    #: ``forward(data)`` takes a PyG ``Data`` object (decided from the signature)
    takes_data: bool = False

    def serves(self, task_type: str) -> bool:
        return self.task_types is None or task_type in self.task_types


def capabilities(model: type | nn.Module) -> Capabilities:
    """The declarations of a model class (or of an instance's class), read once per class
    (a node task asks at every training step; reading the forward signature is ~15 us)."""
    return _class_capabilities(model if isinstance(model, type) else type(model))


@functools.lru_cache(maxsize=1024)
def _class_capabilities(cls: type) -> Capabilities:
    declared = getattr(cls, "task_types", None)
    return Capabilities(
        task_types=frozenset(declared) if declared is not None else None,
        graph_level=bool(getattr(cls, "graph_level", False)),
        uses_node_features=bool(getattr(cls, "uses_node_features", True)),
        computes_selected_nodes=bool(getattr(cls, "computes_selected_nodes", False)),
        precomputes=_overrides(cls, "precompute"),
        adds_loss=_overrides(cls, "extra_loss"),
        takes_data=forward_takes_data(cls),
    )


def forward_takes_data(cls: type) -> bool:
    """Whether ``cls.forward`` takes one ``Data`` object: exactly one required positional
    parameter besides ``self``, not named ``x`` (``forward(x, edge_index)`` has two)."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (AttributeError, TypeError, ValueError):  # no forward, or no signature to read
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in positional and p.default is p.empty]
    return len(required) == 1 and required[0].name != "x"


def _overrides(cls: type, hook: str) -> bool:
    """Whether ``cls`` has its own ``hook`` (GraphModel's defaults do nothing)."""
    method = getattr(cls, hook, None)
    return callable(method) and method is not getattr(GraphModel, hook)
