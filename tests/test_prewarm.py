"""The pool launcher's warm-up before the fork: which jobs it composes, what it pays for
the workers, and that it changes nothing a run sees (the pool's results equal the
in-process ones: tests/test_launchers.py)."""

from __future__ import annotations

import subprocess
import sys

import torch
from hydra import compose, initialize_config_dir

from graphnetz.config_dir import CONF_DIR
from graphnetz.sweep.prewarm import prewarm, representative_jobs


def test_one_job_per_model_and_per_dataset_choice():
    jobs = [
        (0, ["model=gcn", "dataset=karate", "seed=0"]),
        (1, ["model=gcn", "dataset=karate", "seed=1"]),
        (2, ["model=gat", "dataset=karate", "seed=0"]),
        (3, ["model=gat", "dataset=cora", "seed=0"]),
        (4, ["model=gat", "dataset=cora", "seed=1"]),
    ]
    assert [idx for idx, _ in representative_jobs(jobs)] == [0, 2, 3]
    plain = [(7, ["seed=0"]), (8, ["seed=1"])]  # neither group varied: the first job
    assert representative_jobs(plain) == [(7, ["seed=0"])]
    assert representative_jobs([]) == []


def compose_job(idx, overrides):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def test_prewarm_keeps_the_random_state_and_skips_what_it_cannot_build():
    torch.manual_seed(3)
    expected = torch.rand(4)
    torch.manual_seed(3)
    calls = []

    def job_config(idx, overrides):
        calls.append(idx)
        if idx == 1:
            raise RuntimeError("a job Hydra refuses")
        return compose_job(idx, overrides)

    jobs = [(0, ["model=gcn", "dataset=karate"]), (1, ["model=gat", "dataset=karate"])]
    prewarm(jobs, job_config)  # job 1 fails to compose: skipped, no error
    assert calls == [0, 1]
    assert torch.equal(torch.rand(4), expected)


def test_prewarm_pays_the_loader_import_and_the_layer_templates_once():
    """In a fresh process: after the warm-up the Karate loader's module is imported and
    every message-passing class of GCN and GAT has its generated ``propagate``."""
    check = (
        "import sys\n"
        "from hydra import compose, initialize_config_dir\n"
        "from graphnetz.config_dir import CONF_DIR\n"
        "from graphnetz.sweep.prewarm import prewarm\n"
        "def job_config(idx, overrides):\n"
        "    with initialize_config_dir(str(CONF_DIR), version_base='1.3'):\n"
        "        return compose('config', overrides=list(overrides))\n"
        "assert 'graphnetz.data.pyg' not in sys.modules\n"
        "prewarm([(0, ['model=gcn', 'dataset=karate']), (1, ['model=gat'])], job_config)\n"
        "from torch_geometric.nn import MessagePassing\n"
        "def classes(c):\n"
        "    for s in c.__subclasses__():\n"
        "        yield s\n"
        "        yield from classes(s)\n"
        "made = sorted(c.__name__ for c in classes(MessagePassing)\n"
        "              if '_jinja_propagate' in c.__dict__)\n"
        "print('graphnetz.data.pyg' in sys.modules, made)\n"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    loaded, made = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert loaded == "True"
    assert "GCN" in made and "GAT" in made, made
