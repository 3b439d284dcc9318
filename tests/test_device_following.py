"""Code that runs on a GPU creates its tensors on the device of its inputs.

No GPU here, so this checks the habit rather than the device: a torch function mode
records every tensor factory called without ``device=`` (and every floating-point
``cumsum``, which has no deterministic CUDA kernel) while the functions run."""

import math
import os

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch_geometric.data import Data

from graphnetz.tasks.graph_tasks import graph_split
from graphnetz.tasks.link_tasks import TripleIndex, corrupt
from graphnetz.tasks.multilabel_metrics import multilabel_metrics

FACTORIES = {
    torch.arange, torch.zeros, torch.ones, torch.empty, torch.full, torch.rand,
    torch.randn, torch.randint, torch.randperm, torch.tensor, torch.eye,
}  # fmt: skip


class DeviceHabits(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.deviceless, self.float_cumsums = [], []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and kwargs.get("device") is None:
            self.deviceless.append(func.__name__)
        out = func(*args, **kwargs)
        if getattr(func, "__name__", "") == "cumsum" and out.is_floating_point():
            self.float_cumsums.append(tuple(out.shape))
        return out


def test_multilabel_metrics_follow_the_predictions_device():
    gen = torch.Generator().manual_seed(0)
    preds = torch.randn(40, 5, generator=gen)
    target = (torch.rand(40, 5, generator=gen) < 0.4).float()
    target[3, 1] = math.nan  # a missing label: one column ranked on its own
    with DeviceHabits() as habits:
        multilabel_metrics(preds, target)
    assert habits.deviceless == [] and habits.float_cumsums == []


def test_triple_filters_and_corruption_follow_the_triples_device():
    heads, rels, tails = (
        torch.tensor([0, 0, 1, 2]),
        torch.tensor([0, 1, 0, 0]),
        torch.tensor([1, 2, 2, 0]),
    )
    index = TripleIndex(heads, rels, tails, num_relations=2)
    with DeviceHabits() as habits:
        rows, known = index.answers(
            torch.tensor([0, 1], device="cpu"), torch.tensor([0, 0], device="cpu")
        )
        corrupt(torch.stack([heads, tails]), num_nodes=3)
    assert habits.deviceless == []
    assert rows.tolist() == [0, 1] and known.tolist() == [1, 2]


def test_a_graph_split_hands_over_its_own_graph_objects():
    """Lightning moves a split with each graph's in-place ``.to``: the dataset's cached
    graphs must not be the ones moved."""
    graphs = [
        Data(x=torch.ones(3, 2), edge_index=torch.tensor([[0, 1], [1, 2]]), y=torch.tensor([i % 2]))
        for i in range(10)
    ]
    parts, _ = graph_split(graphs, seed=0, split=None)
    for g in (g for split in parts.values() for g in split):
        g.apply(lambda t: t.double() if t.is_floating_point() else t)  # as .to(device) would
    assert all(g.x.dtype == torch.float32 for g in graphs)
    assert sum(len(p) for p in parts.values()) == len(graphs)


def test_the_gpu_question_is_asked_through_nvml_so_forked_workers_can_use_cuda(monkeypatch):
    """The pool launcher asks before it forks: torch's own check would initialise the
    CUDA driver in the launching process and leave every forked worker unable to."""
    from graphnetz.training import accelerators, lean_loop

    seen = []
    monkeypatch.setenv(accelerators.NVML_CHECK, "0")  # restored after the test
    monkeypatch.delenv(accelerators.NVML_CHECK)
    monkeypatch.setattr(
        torch.cuda,
        "is_available",
        lambda: seen.append(os.environ.get(accelerators.NVML_CHECK)) or False,
    )
    assert lean_loop.lean_trainer_refusal({"accelerator": "auto", "max_epochs": 1}) is None
    assert seen == ["1"]


@pytest.mark.parametrize("nvml_count", [-1, 0, 2])
def test_where_nvml_cannot_count_a_child_process_asks_instead(monkeypatch, nvml_count):
    """MIG UUIDs in CUDA_VISIBLE_DEVICES or no NVML library: torch would initialise the
    driver here to answer, so a child process asks (once); where NVML counts, torch asks."""
    from graphnetz.training import accelerators

    this_machine = torch.cuda.is_available()  # what the child will find
    monkeypatch.setenv(accelerators.NVML_CHECK, "1")
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "_device_count_nvml", lambda: nvml_count, raising=False)
    asked_here, children = [], []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: asked_here.append(1) or nvml_count > 0)
    real_run = accelerators.subprocess.run
    monkeypatch.setattr(
        accelerators.subprocess, "run", lambda *a, **k: children.append(a) or real_run(*a, **k)
    )
    accelerators._asked_in_a_child.cache_clear()
    try:
        answers = [accelerators.cuda_available() for _ in range(2)]
    finally:
        accelerators._asked_in_a_child.cache_clear()
    if nvml_count < 0:  # the child runs this machine's real torch
        assert answers == [this_machine] * 2 and len(children) == 1 and not asked_here
    else:
        assert answers == [nvml_count > 0] * 2 and len(asked_here) == 2 and not children
