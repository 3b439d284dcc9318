"""Seeds of one cell trained stacked give each seed the result of its run alone, bit for
bit, whatever seeds run beside it; sweeps stack them and write the same records; a killed
stack resumes seed by seed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from graphnetz.models import GAT, GCN, MLP, GraphSAGE, GraphTransformer, sparse_products
from graphnetz.models.stacked import SeedStreams, StackedEncoder, StackRefused
from graphnetz.sweep.stacking import stack_units
from graphnetz.training.pipeline import train_and_evaluate
from graphnetz.training.resolve import ConfigError, resolve_run
from graphnetz.training.stacked import stack_refusal, train_stacked

REPO = Path(__file__).resolve().parents[1]
TINY = ["model.hidden_channels=8", "num_threads=1"]
KARATE = ["dataset=karate", "trainer.max_epochs=25", *TINY]
ENCODERS = {"gcn": GCN, "gat": GAT, "sage": GraphSAGE, "gt": GraphTransformer, "mlp": MLP}


@pytest.fixture
def specs(make_cfg):
    def _specs(seeds, *overrides, mirror=None):
        return [resolve_run(make_cfg(*overrides, f"seed={s}", mirror=mirror)) for s in seeds]

    return _specs


def assert_same_run(alone, stacked) -> None:
    assert stacked.history == alone.history  # every epoch's loss and metrics, exactly
    assert stacked.metrics == alone.metrics
    assert stacked.selected_epoch == alone.selected_epoch
    assert stacked.epochs_run == alone.epochs_run


@pytest.mark.parametrize("model", sorted(ENCODERS))
def test_a_stacked_seed_is_its_run_alone_whoever_runs_beside_it(specs, model, one_thread):
    runs = specs([0, 1, 2], f"model={model}", *KARATE)
    alone = [train_and_evaluate(spec) for spec in runs]
    for stack in ([0, 1, 2], [2, 0]):  # other seeds beside it, in another order
        results = train_stacked([runs[i] for i in stack])
        for i, result in zip(stack, results, strict=True):
            assert_same_run(alone[i], result.trained)
            assert result.seeds == [runs[j].seed for j in stack]


@pytest.mark.parametrize("model", ["gcn", "sage"])
def test_a_full_stack_at_the_default_width_is_each_run_alone(specs, model, one_thread):
    """The README job's shape: ten seeds at the default width. A propagation of all seeds
    as one wide sparse product rounded differently from the runs alone once it had more
    than 24 columns (MKL picks its kernel by the width): Karate's 4 classes x 7 seeds."""
    runs = specs(range(10), f"model={model}", "dataset=karate", "trainer.max_epochs=30")
    for alone, result in zip(map(train_and_evaluate, runs), train_stacked(runs), strict=True):
        assert_same_run(alone, result.trained)


def test_gat_stacks_exactly_on_a_dense_graph(specs, monkeypatch, one_thread):
    """On a dense graph GAT's attention gradient comes from dense row-block products, one
    per head; a stack's seeds are more heads, and each head's products are its run
    alone's (the block size depends on the graph, not on the number of heads)."""
    monkeypatch.setattr(sparse_products, "DENSE_MIN_NODES", 16)  # Karate: 34 nodes, 16 %
    monkeypatch.setattr(sparse_products, "DENSE_BLOCK_FLOATS", 256)  # 7 rows a block
    monkeypatch.setattr(sparse_products, "DENSE_MIN_WIDTH", 1)
    used = []
    dense_dot = sparse_products._DenseRowBlocks.edge_dot
    monkeypatch.setattr(
        sparse_products._DenseRowBlocks,
        "edge_dot",
        lambda self, *a: used.append(self.groups) or dense_dot(self, *a),
    )
    runs = specs([0, 1], "model=gat", *KARATE)
    alone = [train_and_evaluate(spec) for spec in runs]
    assert used and max(used) == 8  # the dense path ran, on GAT's 8 heads
    for a, stacked in zip(alone, train_stacked(runs), strict=True):
        assert_same_run(a, stacked.trained)
    assert max(used) == 16  # and stacked: two seeds' heads


@pytest.mark.parametrize("model", ["gcn", "gt"])
def test_sparse_bag_of_words_features_stack_exactly(specs, mirror, model, one_thread):
    """Cora's features enter as sparse rows whose stored entries each seed drops itself."""
    runs = specs(
        [0, 1], f"model={model}", "dataset=cora", "trainer.max_epochs=4", *TINY, mirror=mirror
    )
    alone = [train_and_evaluate(spec) for spec in runs]
    for a, stacked in zip(alone, train_stacked(runs), strict=True):
        assert_same_run(a, stacked.trained)


def test_multilabel_early_stopping_and_elu_stack_exactly(specs, mirror, one_thread):
    """Seeds stop at different epochs (each keeps its own history), ELU between layers."""
    runs = specs(
        [0, 1, 2],
        "dataset=humloc",
        "model=gat",
        "+model.activation=elu",
        "trainer.max_epochs=40",
        "task.selection=best_val",
        "task.patience=3",
        *TINY,
        mirror=mirror,
    )
    alone = [train_and_evaluate(spec) for spec in runs]
    assert len({a.epochs_run for a in alone}) > 1  # the seeds really stop apart
    for a, stacked in zip(alone, train_stacked(runs), strict=True):
        assert_same_run(a, stacked.trained)


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_stacked_encoder_draws_what_each_seed_draws_alone(name, one_thread):
    """Training-mode forward on features stored column-major (``rand_like`` follows the
    memory order): each seed's output and gradients are its encoder's alone."""
    cls = ENCODERS[name]
    x = torch.rand(12, 30).t()  # 30 nodes, 12 features, not contiguous
    edges = torch.tensor([[i, (i + 1) % 30] for i in range(30)]).t()
    edges = torch.cat([edges, edges.flip(0)], 1)
    encoders, states = [], []
    for seed in (3, 7):
        torch.manual_seed(seed)
        encoders.append(cls(12, 8, 3))
        states.append(torch.get_rng_state())
    stacked = StackedEncoder(encoders).train()
    out = stacked(x, edges, SeedStreams.from_states(states))
    out.square().sum().backward()
    stacked_grads = [p.grad.clone() for p in stacked.seed_parameters()]
    for i, (encoder, state) in enumerate(zip(encoders, states, strict=True)):
        encoder.zero_grad()
        torch.set_rng_state(state)
        alone = encoder.train()(x, edges)
        alone.square().sum().backward()
        assert torch.equal(out[i], alone)
        own = [p.grad for p in encoder.parameters()]
        assert all(
            torch.equal(a, b) for a, b in zip(own, stacked_grads[i * len(own) :], strict=False)
        )


def test_what_does_not_stack_says_why(specs, make_cfg):
    assert stack_refusal(specs([0], "model=gcn", *KARATE)[0]) is None
    cases = {
        "task type link_pred": ["model=gcn", "task=link_pred", *KARATE],
        "model H2GCN is not stacked": ["model=h2gcn", "dataset=humloc"],
        "the dataset is drawn per seed": ["model=gcn", "dataset=ml_synthetic"],
        "stack_seeds=false": ["model=gcn", "stack_seeds=false", *KARATE],
        "DGI pre-training": ["model=gcn", "task.dgi_pretrain_epochs=2", *KARATE],
        "optimizer torch.optim.LBFGS": ["model=gcn", "task.optimizer._target_=torch.optim.LBFGS"],
    }
    for reason, overrides in cases.items():
        spec = specs([0], *overrides)[0]  # every case resolves: only the stack refuses
        assert reason in (stack_refusal(spec) or ""), reason
    with pytest.raises(StackRefused, match="not the seeds of one cell"):
        train_stacked(specs([0], "model=gcn", *KARATE) + specs([1], "model=mlp", *KARATE))
    with pytest.raises(ConfigError, match="stack_seeds='maybe' is not valid"):
        resolve_run(make_cfg("stack_seeds=maybe"))


def test_units_group_a_cells_seeds_and_feed_every_worker():
    jobs = [
        (i, [f"model={m}", f"seed={s}"])
        for i, (m, s) in enumerate((m, s) for m in ("gcn", "gat") for s in range(6))
    ]
    units = stack_units(jobs, workers=1)
    assert [[i for i, _ in u] for u in units] == [list(range(6)), list(range(6, 12))]
    units = stack_units(jobs, workers=4)  # two cells, four workers: the cells are halved
    assert [[i for i, _ in u] for u in units] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    few = [(0, ["model=gcn", "seed=0"]), (1, ["model=gcn", "seed=1"])]
    assert stack_units(few, workers=2) == [few]  # too small to split
    assert len(stack_units([(i, [f"seed={i}"]) for i in range(40)], 1)) == 3  # at most 16


def _sweep(out: Path, data_dir: Path, *overrides: str):
    args = ["model=gcn,mlp", "seed=0,1,2", *KARATE, f"paths.data_dir={data_dir}"]
    return subprocess.run(
        [sys.executable, "train.py", "-m", *args, f"hydra.sweep.dir={out}", *overrides],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _records(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/result.json")}


@pytest.mark.parametrize("launcher", ["hydra.launcher.n_jobs=1", "hydra.launcher.n_jobs=2"])
def test_a_stacked_sweep_writes_the_records_of_runs_alone(tmp_path, data_dir, launcher):
    alone = _sweep(tmp_path / "alone", data_dir, launcher, "stack_seeds=false")
    stacked = _sweep(tmp_path / "stacked", data_dir, launcher)
    for proc in (alone, stacked):
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "sweep summary: ok 6, failed 0" in proc.stderr
    assert "seeds 0,1,2 trained stacked" in stacked.stderr + stacked.stdout
    expected, found = _records(tmp_path / "alone"), _records(tmp_path / "stacked")
    assert sorted(found) == sorted(expected)  # same identities, same run directories
    for name, record in found.items():
        assert record["stacked"]["seeds"] == [0, 1, 2]
        assert expected[name]["stacked"] is None
        for key in ("history", "metrics", "selected_epoch", "identity", "pairing"):
            assert record[key] == expected[name][key], (name, key)


def test_a_stacked_rerun_without_resume_trains_beside_the_finished_records(tmp_path, data_dir):
    """Relaunched without resume=true, a stack trains again: its checkpoints and records
    go to the rerun folders, and the first records stay as they were (Hydra's own job
    files, its log and config copies, are Hydra's to write in the job's folder)."""
    out = tmp_path / "sweep"
    first = _sweep(out, data_dir, "checkpoint_every_s=0")
    assert first.returncode == 0, first.stderr[-3000:]
    before = {p: p.read_bytes() for p in out.glob("*/result.json")}
    again = _sweep(out, data_dir, "checkpoint_every_s=0")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "seeds 0,1,2 trained stacked" in again.stderr + again.stdout
    assert {p: p.read_bytes() for p in before} == before and len(before) == 6
    reruns = {n: r for n, r in _records(out).items() if n.endswith("_rerun1")}
    assert len(reruns) == 6 and all(r["status"] == "ok" for r in reruns.values())
    assert not list(out.glob("*/checkpoint.ckpt"))  # each finished run discarded its own


def test_run_benchmark_stacks_a_tasks_seeds_with_the_same_records(tmp_path, data_dir):
    from graphnetz import iter_benchmark_tasks, run_benchmark

    karate = [t for t in iter_benchmark_tasks("social") if t.key == "karate/node_cls"]
    common = {"trainer.max_epochs": 15, "num_threads": 1, "paths.data_dir": str(data_dir)}
    for name, stack in (("alone", False), ("stacked", True)):
        run_benchmark(
            models=["gcn"],
            seeds=range(3),
            tasks=karate,
            out_dir=tmp_path / name,
            progress=False,
            **common,
            stack_seeds=stack,
        )
    alone, stacked = _records_under(tmp_path / "alone"), _records_under(tmp_path / "stacked")
    assert sorted(alone) == sorted(stacked) and len(alone) == 3
    for key, record in stacked.items():
        assert record["stacked"]["seeds"] == [0, 1, 2] and alone[key]["stacked"] is None
        assert record["history"] == alone[key]["history"]


def _records_under(root: Path) -> dict[str, dict]:
    return {str(p.relative_to(root)): json.loads(p.read_text()) for p in root.rglob("result.json")}


def test_a_stack_too_large_for_memory_is_refused_before_training(specs, monkeypatch):
    from graphnetz.training import stacked

    monkeypatch.setattr(stacked, "MAX_STACK_ELEMENTS", 100)
    with pytest.raises(StackRefused, match="fewer seeds a stack"):
        train_stacked(specs([0, 1], "model=gcn", *KARATE))
    monkeypatch.setattr(stacked, "MAX_STACK_SEED_FLOATS", 34 * 8 - 1)
    with pytest.raises(StackRefused, match="34 nodes x width 8: above 271 floats a seed"):
        train_stacked(specs([0, 1], "model=gcn", *KARATE))


class _Killed(Exception):
    """Stands for the process being killed right after a checkpoint was saved."""


def test_a_killed_stack_resumes_seed_by_seed_to_the_uninterrupted_result(
    make_cfg, tmp_path, monkeypatch, one_thread
):
    from graphnetz.training.checkpoint import CHECKPOINT_NAME, PeriodicCheckpoint
    from graphnetz.training.run import run_experiment

    overrides = ["model=gat", *KARATE, "checkpoint_every_s=0"]
    expected = {
        s: train_and_evaluate(resolve_run(make_cfg(*overrides, f"seed={s}"))) for s in (0, 1)
    }
    save = PeriodicCheckpoint.on_train_epoch_end

    def killed_after_epoch_4(self, trainer, module):
        save(self, trainer, module)
        if trainer.current_epoch == 4 and "seed=1" in module.progress_label:
            raise _Killed

    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_end", killed_after_epoch_4)
    runs = [resolve_run(make_cfg(*overrides, f"seed={s}")) for s in (0, 1)]
    with pytest.raises(_Killed):
        train_stacked(runs, [tmp_path / f"s{s}" for s in (0, 1)])
    monkeypatch.setattr(PeriodicCheckpoint, "on_train_epoch_end", save)
    for s in (0, 1):  # each seed alone, from the checkpoint the stack saved for it
        assert (tmp_path / f"s{s}" / CHECKPOINT_NAME).exists()
        record = run_experiment(
            make_cfg(*overrides, f"seed={s}", "resume=true"), tmp_path / f"s{s}"
        )
        assert record.resumed["from_epoch"] == 5
        assert record.history == expected[s].history and record.metrics == expected[s].metrics


def test_a_job_that_cannot_start_costs_only_itself_in_a_unit():
    from graphnetz.sweep.stacking import Deferred, run_unit

    unit = [(i, [f"seed={i}"]) for i in range(3)]

    def run_one(idx, overrides, config):
        if idx == 1:
            raise ValueError("Hydra refused this job's config")
        return f"ran {idx}"

    def no_config(idx, overrides):
        raise ValueError("cannot compose")  # so nothing is stacked either

    results = dict(run_unit(unit, no_config, run_one, catch=True))
    assert results[0] == "ran 0" and results[2] == "ran 2"
    assert isinstance(results[1], ValueError)
    with pytest.raises(ValueError, match="refused"):
        run_unit(unit, no_config, run_one)  # in-process, as Hydra's basic launcher: raised
    deferred = dict(run_unit(unit, no_config, run_one, catch=True, defer=True))
    assert deferred[0] == "ran 0"  # the forked pool queues the rest one by one
    assert all(isinstance(deferred[i], Deferred) for i in (1, 2))


@pytest.mark.parametrize("graph_level", [False, True])
def test_every_loop_evaluates_the_last_epoch_when_not_every_epoch_is(
    specs, mirror, graph_level, one_thread
):
    """trainer.check_val_every_n_epoch=2 over 5 epochs: epochs 1 and 3, and the last (4),
    which final selection reports; 5 epochs ran. The same alone, stacked and in
    Lightning's loop."""
    data = ["dataset=mutag", "model=gin"] if graph_level else ["dataset=karate", "model=gcn"]
    every = ["trainer.max_epochs=5", "trainer.check_val_every_n_epoch=2", "task.selection=final"]
    runs = specs([0, 1], *data, *every, *TINY, mirror=mirror)
    alone = [train_and_evaluate(spec) for spec in runs]
    for run in alone:
        assert [row["epoch"] for row in run.history] == [1, 3, 4]
        assert run.selected_epoch == 4 and run.epochs_run == 5
    for a, stacked in zip(alone, train_stacked(runs), strict=True):
        assert_same_run(a, stacked.trained)
    lightning = specs([0], *data, *every, *TINY, "fit_loop=lightning", mirror=mirror)[0]
    assert [row["epoch"] for row in train_and_evaluate(lightning).history] == [1, 3, 4]
