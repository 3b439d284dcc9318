"""Graph-level seeds trained as one stack (the union of their mini-batches) give each seed
the result of its run alone, bit for bit, whichever seeds run beside it; what does not
stack says why; a sweep stacks them and writes the records of runs alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from test_stacked_seeds import assert_same_run

from graphnetz.models.stacked import StackRefused
from graphnetz.models.stacked_graphs import GraphStack, seed_stream
from graphnetz.training.pipeline import build_run, train_and_evaluate
from graphnetz.training.resolve import resolve_run
from graphnetz.training.stacked import stack_refusal, train_stacked

REPO = Path(__file__).resolve().parents[1]
MUTAG = ["dataset=mutag", "model.hidden_channels=16", "num_threads=1"]


@pytest.fixture
def specs(make_cfg, mirror):
    def _specs(seeds, *overrides):
        return [
            resolve_run(make_cfg(*MUTAG, *overrides, f"seed={s}", mirror=mirror)) for s in seeds
        ]

    return _specs


@pytest.mark.parametrize("model", ["gcn", "sage", "gin", "mlp"])
def test_a_stacked_graph_seed_is_its_run_alone_whoever_runs_beside_it(specs, model, one_thread):
    """GIN's readout dropout (p=0.5) draws every step: from each seed's own stream."""
    runs = specs([0, 1, 2], f"model={model}", "trainer.max_epochs=3")
    alone = [train_and_evaluate(spec) for spec in runs]
    for stack in ([0, 1, 2], [2, 0]):
        results = train_stacked([runs[i] for i in stack])
        for i, result in zip(stack, results, strict=True):
            assert_same_run(alone[i], result.trained)
            assert result.seeds == [runs[j].seed for j in stack]


def test_graph_seeds_stop_early_apart_and_evaluate_every_second_epoch(specs, one_thread):
    runs = specs(
        [0, 1, 2, 3],
        "model=gcn",
        "+model.activation=elu",
        "trainer.max_epochs=30",
        "trainer.check_val_every_n_epoch=2",
        "task.selection=best_val",
        "task.patience=6",  # epochs: three evaluations
        "task.lr=0.01",
        "model.dropout=0.3",  # dropout on the input and between layers, per seed
    )
    alone = [train_and_evaluate(spec) for spec in runs]
    assert len({a.epochs_run for a in alone}) > 1  # the seeds really stop apart
    for a, stacked in zip(alone, train_stacked(runs), strict=True):
        assert_same_run(a, stacked.trained)


def test_seed_stream_draws_what_the_global_generator_would(one_thread):
    torch.manual_seed(3)
    generator = torch.Generator()
    generator.set_state(torch.get_rng_state())
    expected = torch.rand(5)
    after = torch.get_rng_state()
    torch.manual_seed(11)
    outside = torch.get_rng_state()
    with seed_stream(generator):
        drawn = torch.rand(5)
    assert torch.equal(drawn, expected)
    assert torch.equal(generator.get_state(), after)  # the stream went on
    assert torch.equal(torch.get_rng_state(), outside)  # the global one is untouched


def test_what_does_not_stack_at_graph_level_says_why(specs, one_thread):
    assert stack_refusal(specs([0], "model=gcn", "trainer.max_epochs=3")[0]) is None
    for model in ("gat", "gt"):  # attention: no gain from a union (docs/speed.md)
        reason = stack_refusal(specs([0], f"model={model}", "trainer.max_epochs=3")[0])
        assert "is not stacked for graph_cls" in reason
    max_sage = specs([0, 1], "model=sage", "+model.aggr=max", "trainer.max_epochs=3")
    with pytest.raises(StackRefused, match="mean or sum aggregation only"):
        train_stacked(max_sage)  # nothing trained: the runs then train alone
    built = [build_run(spec) for spec in specs([0], "model=gcn") + specs([1], "model=sage")]
    with pytest.raises(StackRefused, match="differ in class or settings"):
        GraphStack([b.model for b in built])


def test_a_stacked_mutag_sweep_writes_the_records_of_runs_alone(tmp_path, data_dir, mirror):
    def sweep(name: str, *extra: str) -> dict:
        out = tmp_path / name
        cmd = [sys.executable, str(REPO / "train.py"), "-m", "model=gcn", "seed=0,1", *MUTAG]
        cmd += ["trainer.max_epochs=3"]
        cmd += [f"paths.data_dir={data_dir}", f"paths.data_mirror={mirror}"]
        cmd += [f"hydra.sweep.dir={out}", f"paths.output_dir={tmp_path}/o", *extra]
        subprocess.run(cmd, check=True, cwd=REPO, capture_output=True)
        return {
            r["seed"]: r for r in (json.loads(p.read_text()) for p in out.glob("*/result.json"))
        }

    stacked = sweep("stacked", "hydra.launcher.n_jobs=1")
    alone = sweep("alone", "hydra.launcher.n_jobs=1", "stack_seeds=false")
    assert sorted(stacked) == [0, 1]
    for seed, record in stacked.items():
        assert record["stacked"]["seeds"] == [0, 1]
        assert alone[seed]["stacked"] is None
        for key in ("history", "metrics", "selected_epoch", "identity", "pairing"):
            assert record[key] == alone[seed][key], (seed, key)


class _Killed(Exception):
    pass


def test_a_killed_graph_stack_resumes_seed_by_seed_to_the_uninterrupted_result(
    make_cfg, mirror, tmp_path, monkeypatch, one_thread
):
    """GIN (readout dropout every step): each seed's checkpoint carries its own stream."""
    from graphnetz.training.checkpoint import CHECKPOINT_NAME, PeriodicCheckpoint
    from graphnetz.training.run import run_experiment

    overrides = [*MUTAG, "model=gin", "trainer.max_epochs=6", "checkpoint_every_s=0"]

    def cfg(seed: int, *extra: str):
        return make_cfg(*overrides, f"seed={seed}", *extra, mirror=mirror)

    expected = {s: train_and_evaluate(resolve_run(cfg(s))) for s in (0, 1)}
    save = PeriodicCheckpoint.on_train_epoch_end

    def killed_after_epoch_2(self, trainer, module):
        save(self, trainer, module)
        if trainer.current_epoch == 2 and "seed=1" in module.progress_label:
            raise _Killed

    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_end", killed_after_epoch_2)
    with pytest.raises(_Killed):
        train_stacked([resolve_run(cfg(s)) for s in (0, 1)], [tmp_path / f"s{s}" for s in (0, 1)])
    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_end", save)
    for s in (0, 1):  # each seed alone, from the checkpoint the stack saved for it
        assert (tmp_path / f"s{s}" / CHECKPOINT_NAME).exists()
        record = run_experiment(cfg(s, "resume=true"), tmp_path / f"s{s}")
        assert record.resumed["from_epoch"] == 3
        assert record.history == expected[s].history and record.metrics == expected[s].metrics
