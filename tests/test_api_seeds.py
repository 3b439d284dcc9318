"""``seeds=`` takes integers of any kind (numpy's included) and refuses everything else."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from graphnetz import run_benchmark, task_from_dataset
from graphnetz.api.benchmark import _seeds

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize(
    ("seeds", "seed", "expected"),
    [
        (np.arange(3), None, [0, 1, 2]),
        ([np.int32(4), 5], None, [4, 5]),
        (np.int64(7), None, [7]),
        (None, np.int64(2), [2]),
    ],
)
def test_numpy_integers_are_seeds_as_plain_ints(seeds, seed, expected):
    chosen = _seeds(seeds, seed)
    assert chosen == expected
    assert all(type(s) is int for s in chosen)


@pytest.mark.parametrize("seeds", [[True, False], [0.0, 1.0], np.array([0.5]), [], ["0"]])
def test_anything_but_integers_is_refused(seeds):
    with pytest.raises(ValueError, match="seeds= must be a non-empty iterable of integers"):
        _seeds(seeds, None)


def test_a_benchmark_runs_the_seeds_of_np_arange(tmp_path, data_dir):
    n = 12
    y = torch.arange(n) % 2
    x = y[:, None].float() + torch.randn(n, 3, generator=torch.Generator().manual_seed(0))
    ring = torch.stack([torch.arange(n), (torch.arange(n) + 1) % n])
    task = task_from_dataset("ring", "node_cls", Data(x=x, edge_index=ring, y=y), split="random")
    report = run_benchmark(
        models=["mlp"],
        tasks=[task],
        seeds=np.arange(2),
        out_dir=tmp_path,
        progress=False,
        **{"paths.data_dir": str(data_dir), "trainer.max_epochs": 1, "trainer.accelerator": "cpu"},
    )
    assert report.summary()["n"].tolist() == [2]
    record = json.loads((tmp_path / "ring/node_cls/mlp/seed_1/result.json").read_text())
    assert record["seed"] == 1
