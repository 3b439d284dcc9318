"""A user model's code is part of its runs' identity: reusing an ``out_dir`` after editing the
class retrains, and unchanged code reuses the records (``resume=True``)."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import textwrap

import pytest
import torch
from torch_geometric.data import Data

from graphnetz import run_benchmark, task_from_dataset
from graphnetz.api.models import model_spec, source_digest

pytestmark = pytest.mark.usefixtures("one_thread")

MODULE = "graphnetz_test_user_model"
SOURCE = """
import torch
from torch import nn


class Edited(nn.Module):
    task_types = {{"node_cls"}}

    def __init__(self, in_channels, hidden_channels=8, out_channels=2):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels)

    def forward(self, x, edge_index):
        return {body}
"""


def ring(n: int = 20) -> Data:
    """A ring whose labels alternate, features the label plus noise (any graph will do)."""
    y = torch.arange(n) % 2
    x = y[:, None].float() + torch.randn(n, 3, generator=torch.Generator().manual_seed(0))
    src = torch.arange(n)
    edge_index = torch.stack([torch.cat([src, (src + 1) % n]), torch.cat([(src + 1) % n, src])])
    return Data(x=x, edge_index=edge_index, y=y)


def user_class(tmp_path, monkeypatch, body: str) -> type:
    """``Edited`` from the user's file ``<tmp_path>/<MODULE>.py`` as it reads now (the file
    rewritten in place, as an editor saves it, and imported afresh)."""
    path = tmp_path / f"{MODULE}.py"
    path.write_text(textwrap.dedent(SOURCE.format(body=body)))
    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, MODULE, module)
    spec.loader.exec_module(module)
    return module.Edited


def test_the_digest_follows_the_class_source(tmp_path, monkeypatch):
    first = model_spec("M", user_class(tmp_path, monkeypatch, "self.lin(x)")).config_node()
    same = model_spec("M", user_class(tmp_path, monkeypatch, "self.lin(x)")).config_node()
    edited = model_spec("M", user_class(tmp_path, monkeypatch, "self.lin(x) * 0")).config_node()
    assert first["defined_in"] == edited["defined_in"]  # same module and class name
    assert first["source_digest"] == same["source_digest"]
    assert first["source_digest"] != edited["source_digest"]


def no_source_class(body: str) -> type:
    """``Edited`` compiled from a string (no file to read, as in a REPL)."""
    namespace: dict = {}
    exec(textwrap.dedent(SOURCE.format(body=body)), namespace)
    return namespace["Edited"]


def test_a_class_without_source_is_told_apart_by_its_methods_code():
    first, same, edited = (
        no_source_class(b) for b in ("self.lin(x)", "self.lin(x)", "-self.lin(x)")
    )
    with pytest.raises((OSError, TypeError)):
        inspect.getsource(first)  # the case at hand: no source to read
    assert source_digest(first) == source_digest(same)
    assert source_digest(first) != source_digest(edited)


def test_resume_retrains_an_edited_class_and_reuses_an_unchanged_one(
    tmp_path, monkeypatch, data_dir
):
    task = task_from_dataset("blobs", "node_cls", ring(), split="random")
    out = tmp_path / "out"
    settings = {
        "paths.data_dir": str(data_dir),
        "trainer.max_epochs": 2,
        "trainer.accelerator": "cpu",
    }

    def run(body: str) -> list[dict]:
        cls = user_class(tmp_path, monkeypatch, body)
        run_benchmark(
            models={"Mine": cls},
            tasks=[task],
            seeds=[0],
            out_dir=out,
            resume=True,
            progress=False,
            **settings,
        )
        found = sorted((out / "blobs/node_cls/Mine").glob("seed_0*/result.json"))
        return [json.loads(p.read_text()) for p in found]

    first = run("self.lin(x)")
    assert len(first) == 1 and first[0]["status"] == "ok", first[0].get("error")
    assert run("self.lin(x)") == first  # unchanged code: the record is reused as it is
    edited = run("self.lin(x) * 0")
    assert len(edited) == 2  # the edited class trained anew, into a folder of its own
    digests = {r["config"]["model"]["source_digest"] for r in edited}
    assert len(digests) == 2
