"""Deep Graph Infomax: embeddings of the right shape, seeded, and a pre-training option."""

from __future__ import annotations

import pytest
import torch

from graphnetz.data.pyg import load_karate
from graphnetz.models.dgi import HiddenLayers, train_dgi
from graphnetz.models.encoders import GCN
from graphnetz.training.run import run_experiment


def test_train_dgi_returns_seeded_embeddings(data_dir):
    data = load_karate(data_dir)
    runs = []
    for _ in range(2):
        torch.manual_seed(123)
        encoder = GCN(data.num_features, 16, 16, num_layers=1, dropout=0.0)
        runs.append(train_dgi(encoder, data, epochs=5, lr=1e-2, seed=7))
    assert runs[0].shape == (34, 16)
    assert torch.equal(runs[0], runs[1])


def test_dgi_changes_the_encoder_it_trains(data_dir):
    data = load_karate(data_dir)
    encoder = GCN(data.num_features, 16, 4, num_layers=2, dropout=0.0)
    before = [p.detach().clone() for p in encoder.parameters()]
    z = train_dgi(HiddenLayers(encoder), data, epochs=3, lr=1e-2, seed=0)
    assert z.shape == (34, 16)
    changed = [not torch.equal(a, b) for a, b in zip(before, encoder.parameters(), strict=True)]
    assert changed[:2] == [True, True]  # hidden layer trained ...
    assert changed[2:] == [False, False]  # ... output layer left to supervised training


def test_hidden_layers_need_two_layers():
    with pytest.raises(ValueError, match=">= 2 layers"):
        HiddenLayers(GCN(4, 8, 2, num_layers=1))


def test_node_classification_with_dgi_pretraining_runs(make_cfg, tmp_path):
    cfg = make_cfg(
        "dataset=karate",
        "model=gcn",
        "task=node_cls",
        "task.dgi_pretrain_epochs=5",
        "trainer.max_epochs=3",
    )
    record = run_experiment(cfg, tmp_path)
    assert record.status == "ok", record.reason
    assert record.config["task"]["dgi_pretrain_epochs"] == 5
    assert list(record.metrics) == ["train", "val", "test"]  # no DGI row, only the task's


@pytest.mark.parametrize("model", ["gcn", "gat"])
def test_dgi_pretraining_changes_what_supervised_training_starts_from(make_cfg, model):
    """DGI really runs: the first supervised epoch starts from pre-trained hidden layers.
    (GAT + 3 DGI epochs is the resume test's case, so that test would fail if a resumed run
    pre-trained again, and this one fails if pre-training silently did nothing.)"""
    base = ["dataset=karate", f"model={model}", "model.hidden_channels=8", "seed=3"]
    on = run_experiment(make_cfg(*base, "task.dgi_pretrain_epochs=3", "trainer.max_epochs=2"))
    off = run_experiment(make_cfg(*base, "task.dgi_pretrain_epochs=0", "trainer.max_epochs=2"))
    assert on.status == off.status == "ok"
    assert on.history[0]["train_loss"] != off.history[0]["train_loss"]
