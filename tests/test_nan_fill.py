"""torch's NaN fill of new tensors is on for a CPU run's first evaluated epoch, off after
it, and back as it was when training ends; a read of unwritten memory still shows."""

from __future__ import annotations

import pytest
import torch
import torch.utils.deterministic as torch_deterministic

from graphnetz.models.encoders import NodeEncoder
from graphnetz.training.nan_fill import FillUntilFirstEvaluation
from graphnetz.training.resolve import resolve_run
from graphnetz.training.run import run_experiment
from graphnetz.training.stacked import train_stacked

KARATE = ["dataset=karate", "model=gcn", "model.hidden_channels=8", "num_threads=1"]


@pytest.fixture
def fill_during_epochs(monkeypatch) -> list[tuple[bool, bool]]:
    """Per epoch, (was the fill on while it ran, did it evaluate)."""
    seen: list[tuple[bool, bool]] = []
    epoch_ended = FillUntilFirstEvaluation.epoch_ended

    def spy(self, evaluated: bool) -> None:
        seen.append((torch_deterministic.fill_uninitialized_memory, evaluated))
        epoch_ended(self, evaluated)

    monkeypatch.setattr(FillUntilFirstEvaluation, "epoch_ended", spy)
    return seen


def test_the_lean_loop_fills_until_its_first_evaluated_epoch(
    make_cfg, tmp_path, fill_during_epochs
):
    record = run_experiment(make_cfg(*KARATE, "trainer.max_epochs=4"), tmp_path / "every")
    assert record.status == "ok", record.reason
    assert fill_during_epochs == [(True, True), (False, True), (False, True), (False, True)]
    assert torch_deterministic.fill_uninitialized_memory is True  # torch's setting again

    fill_during_epochs.clear()
    cfg = make_cfg(*KARATE, "trainer.max_epochs=5", "trainer.check_val_every_n_epoch=2")
    assert run_experiment(cfg, tmp_path / "second").status == "ok"
    # epochs 1, 3 and the last are evaluated: the fill lasts until epoch 1 has ended
    assert fill_during_epochs == [
        (True, False),
        (True, True),
        (False, False),
        (False, True),
        (False, True),
    ]
    assert torch_deterministic.fill_uninitialized_memory is True


def test_node_and_graph_stacks_fill_until_their_first_evaluation(
    make_cfg, mirror, fill_during_epochs, one_thread
):
    node = [resolve_run(make_cfg(*KARATE, "trainer.max_epochs=3", f"seed={s}")) for s in (0, 1)]
    train_stacked(node)
    graph = [
        resolve_run(
            make_cfg(
                "dataset=mutag",
                "model=gin",
                "model.hidden_channels=8",
                "trainer.max_epochs=3",
                f"seed={s}",
                mirror=mirror,
            )
        )
        for s in (0, 1)
    ]
    train_stacked(graph)
    assert fill_during_epochs == [(True, True), (False, True), (False, True)] * 2
    assert torch_deterministic.fill_uninitialized_memory is True


def test_the_setting_comes_back_when_training_fails(make_cfg, tmp_path, monkeypatch):
    from graphnetz.tasks.base import GraphTask

    evaluate = GraphTask.evaluate_epoch

    def fails_in_epoch_2(self) -> None:
        if self.current_epoch == 2:
            raise RuntimeError("injected failure")
        evaluate(self)

    monkeypatch.setattr(GraphTask, "evaluate_epoch", fails_in_epoch_2)
    record = run_experiment(make_cfg(*KARATE, "trainer.max_epochs=4"), tmp_path / "run")
    assert record.status == "failed" and "injected failure" in record.error
    assert torch_deterministic.fill_uninitialized_memory is True


def test_a_model_reading_unwritten_memory_still_diverges(make_cfg, tmp_path, monkeypatch):
    """The reason for the fill: such a read gives NaN in the first epoch, which the run
    reports, instead of whatever the memory held."""
    apply_layers = NodeEncoder.apply_layers

    def reads_unwritten_memory(self, *args, **kwargs):
        out = apply_layers(self, *args, **kwargs)
        return out + 0.0 * torch.empty_like(out)

    monkeypatch.setattr(NodeEncoder, "apply_layers", reads_unwritten_memory)
    record = run_experiment(make_cfg(*KARATE, "trainer.max_epochs=4"), tmp_path / "run")
    assert record.status == "diverged", (record.status, record.reason)
    assert record.diverged_epoch == 0
