"""What a search makes of its runs: the metric they name, the direction it is optimised in,
and runs that fail with an error (retried; a bad point once another point trains, else
outside the budget) or diverge (a bad point)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import optuna
import pytest
import torch
from test_relational_ranking import triples_graph
from torch_geometric.data import Data

from graphnetz.run_record import RunRecord
from graphnetz.training import run as run_module
from graphnetz.training.run import run_experiment
from graphnetz.tune import study as study_module
from graphnetz.tune.selected import tuned_config_text
from graphnetz.tune.space import parse_space
from graphnetz.tune.study import ERROR_ATTEMPTS, ERRORED_POINTS, JOURNAL_NAME, Search, TuneError

SPACE = parse_space(
    "lr",
    {
        "budget": 2,
        "inner_seeds": [100, 101],
        "sampler_seed": 3,
        "params": {"task.lr": {"type": "float", "low": 1e-3, "high": 0.3, "log": True}},
    },
)
KARATE = ["dataset=karate", "model=gcn", "trainer.max_epochs=2", "num_threads=1"]


def trial_scores(out: Path, metric: str) -> dict[float, float]:
    """task.lr -> mean validation ``metric`` over the inner seeds, read from every trial's
    run records (not from the study)."""
    by_point: dict[float, list[float]] = {}
    for path in (out / "trials").rglob("result.json"):
        record = RunRecord.read(path)
        by_point.setdefault(record.config["task"]["lr"], []).append(record.metrics["val"][metric])
    return {lr: sum(vals) / len(vals) for lr, vals in by_point.items()}


# ---------------------------------------------------------------- the metric of the runs
def knowledge_graph() -> Data:
    """12 entities, 2 relations, 40 distinct triples (28 train, 6 val, 6 test)."""
    gen = torch.Generator().manual_seed(0)
    seen: list[tuple[int, int, int]] = []
    while len(seen) < 40:
        h, t = torch.randint(12, (2,), generator=gen).tolist()
        r = int(torch.randint(2, (1,), generator=gen))
        if h != t and (h, r, t) not in seen:
            seen.append((h, r, t))
    return triples_graph(seen[:28], seen[28:34], seen[34:], num_nodes=12, num_relations=2)


def test_a_knowledge_graph_search_is_scored_and_labelled_by_mrr(tmp_path, monkeypatch):
    """Relational link prediction ranks triples: its runs' primary metric is MRR, not the
    link task's AUC, and the study, its +tuned file and its summary say so."""
    monkeypatch.setattr(
        study_module,
        "run_experiment",
        lambda cfg, run_dir: run_experiment(cfg, run_dir, load_data=knowledge_graph),
    )
    overrides = ["dataset=fb15k_237", "model=gcn", "trainer.max_epochs=2", "num_threads=1"]
    overrides += ["model.num_layers=1", "model.hidden_channels=8", "task.rank_sample=null"]
    overrides.append(f"paths.data_dir={tmp_path / 'data'}")
    one_seed = replace(SPACE, inner_seeds=(100,))
    result = Search(overrides, one_seed, tmp_path / "out").run()
    assert (result.metric, result.direction) == ("mrr", "max")
    scores = trial_scores(tmp_path / "out" / result.study, "mrr")
    assert len(scores) == 2
    best = max(scores, key=scores.get)
    assert (result.params["task.lr"], result.value) == (best, pytest.approx(scores[best]))
    assert result.tuning_block()["metric"] == "val/mrr"
    assert "mean val mrr" in tuned_config_text(result)


def test_a_regression_search_minimises_the_validation_mae(tmp_path):
    overrides = ["dataset=triangles", "dataset.loader.num_graphs=40", "model=gcn"]
    overrides += ["trainer.max_epochs=2", "num_threads=1", f"paths.data_dir={tmp_path / 'd'}"]
    result = Search(overrides, SPACE, tmp_path / "out", budget=3).run()
    assert (result.metric, result.direction) == ("mae", "min")
    scores = trial_scores(tmp_path / "out" / result.study, "mae")
    assert len(scores) == 3 and len(set(scores.values())) == 3
    best = min(scores, key=scores.get)  # the lowest error, not the highest
    assert (result.params["task.lr"], result.value) == (best, pytest.approx(scores[best]))


# ---------------------------------------------------------------- runs that do not finish
@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    return Search([*KARATE, f"paths.data_dir={data}"], SPACE, tmp_path_factory.mktemp("u")).run()


def karate_search(tmp_path) -> Search:
    return Search([*KARATE, f"paths.data_dir={tmp_path / 'data'}"], SPACE, tmp_path / "out")


def study_trials(out: Path) -> list[optuna.trial.FrozenTrial]:
    """The trials of the study under ``out``, read from its journal."""
    (journal,) = out.glob(f"*/{JOURNAL_NAME}")
    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(journal))
    )
    study = optuna.load_study(study_name=journal.parent.name, storage=storage)
    return study.get_trials(deepcopy=False)


def trial_states(out: Path) -> dict[int, str]:
    return {t.number: t.state.name for t in study_trials(out)}


def test_runs_failing_with_an_error_stop_the_search_without_spending_its_budget(
    tmp_path, monkeypatch, uninterrupted
):
    """A missing mirror fails every run: after a few attempts at each of two points the
    search stops with the run's error, both trials unfinished; rerun once it is fixed, it
    selects what an uninterrupted search selects."""
    real = run_module.train_and_evaluate
    calls = []

    def no_mirror(spec, *args, **kwargs):
        calls.append(spec.seed)
        raise FileNotFoundError("data mirror /nowhere not found")

    monkeypatch.setattr(run_module, "train_and_evaluate", no_mirror)
    with pytest.raises(TuneError, match=r"cause is likely not the points .*data mirror /nowhere"):
        karate_search(tmp_path).run()
    # each trial's first run, ERROR_ATTEMPTS times, at ERRORED_POINTS points: nothing more
    assert (ERROR_ATTEMPTS, ERRORED_POINTS) == (3, 2)
    assert calls == [100] * 6
    assert trial_states(tmp_path / "out") == {0: "RUNNING", 1: "RUNNING"}

    monkeypatch.setattr(run_module, "train_and_evaluate", real)
    got = karate_search(tmp_path).run()
    assert (got.params, got.value) == (uninterrupted.params, uninterrupted.value)
    assert (got.trials_complete, got.trials_failed, got.budget) == (2, 0, 2)


def test_an_error_that_goes_away_is_retried_at_the_same_point(tmp_path, monkeypatch, uninterrupted):
    real = run_module.train_and_evaluate
    calls = []

    def flaky_once(spec, *args, **kwargs):
        calls.append((spec.seed, spec.config["task"]["lr"]))
        if len(calls) == 2:  # trial 0, second inner seed
            raise OSError("stale file handle")
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "train_and_evaluate", flaky_once)
    got = karate_search(tmp_path).run()
    assert (got.params, got.value) == (uninterrupted.params, uninterrupted.value)
    assert (got.trials_complete, got.trials_failed) == (2, 0)
    first_lr = calls[0][1]  # seed 100 is reused; seed 101 runs again at the same point
    assert calls[:3] == [(100, first_lr), (101, first_lr), (101, first_lr)]
    assert len(calls) == 5


def test_a_diverged_trial_is_a_bad_point_that_counts(tmp_path, monkeypatch):
    real = run_module.train_and_evaluate
    trained = []

    def first_trial_diverges(spec, *args, **kwargs):
        outcome = real(spec, *args, **kwargs)
        trained.append(spec.seed)
        if len(trained) == 1:  # trial 0's first run: the loss turns NaN at the last epoch
            outcome.history[-1]["train_loss"] = float("nan")
        return outcome

    monkeypatch.setattr(run_module, "train_and_evaluate", first_trial_diverges)
    got = karate_search(tmp_path).run()
    assert (got.trials_complete, got.trials_failed, got.budget) == (1, 1, 2)
    assert len(trained) == 1 + 2  # not retried: trial 0 stops at its diverged run
    again = karate_search(tmp_path).run()  # a rerun neither retries nor replaces it
    assert (again.trials_complete, again.trials_failed, len(trained)) == (1, 1, 3)


def always_failing_at_the_first_point(calls):
    """train_and_evaluate, but the first point's runs fail every time before training (a
    model that cannot be built there); ``calls``: (seed, lr) of each run."""
    real = run_module.train_and_evaluate

    def train(spec, *args, **kwargs):
        calls.append((spec.seed, spec.config["task"]["lr"]))
        if spec.config["task"]["lr"] == calls[0][1]:
            raise ValueError("16 heads do not divide 24")
        return real(spec, *args, **kwargs)

    return train


def test_a_point_that_always_fails_with_an_error_fails_once_another_trains(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(run_module, "train_and_evaluate", always_failing_at_the_first_point(calls))
    got = karate_search(tmp_path).run()
    assert (got.trials_complete, got.trials_failed, got.budget) == (1, 1, 2)
    bad = calls[0][1]
    assert got.params["task.lr"] != bad
    # 3 attempts at the first point (its first seed each time), then 2 runs at the second
    assert calls[:3] == [(100, bad)] * 3 and len(calls) == 5
    assert trial_states(tmp_path / "out") == {0: "FAIL", 1: "COMPLETE"}
    again = karate_search(tmp_path).run()  # a rerun neither retries nor replaces it
    assert (again.trials_complete, again.trials_failed, len(calls)) == (1, 1, 5)


def test_error_attempts_are_counted_across_reruns(tmp_path, monkeypatch):
    """A search killed at its second attempt at a failing point makes one more attempt
    when rerun (3 in all), then moves on: the point fails and the budget is completed."""
    calls = []
    failing = always_failing_at_the_first_point(calls)

    def killed_at_the_second_attempt(spec, *args, **kwargs):
        if len(calls) == 1:
            calls.append((spec.seed, spec.config["task"]["lr"]))
            raise KeyboardInterrupt
        return failing(spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "train_and_evaluate", killed_at_the_second_attempt)
    with pytest.raises(KeyboardInterrupt):
        karate_search(tmp_path).run()
    assert trial_states(tmp_path / "out") == {0: "RUNNING"}
    got = karate_search(tmp_path).run()
    bad = calls[0][1]
    assert calls[:4] == [(100, bad)] * 4  # 1 failed, 1 killed, then 2 more failed: 3 in all
    assert bad not in [lr for _, lr in calls[4:]]
    assert (got.trials_complete, got.trials_failed, got.budget) == (1, 1, 2)
    assert trial_states(tmp_path / "out") == {0: "FAIL", 1: "COMPLETE"}


def test_two_points_failing_in_a_row_are_failed_by_a_rerun_once_a_point_trains(
    tmp_path, monkeypatch
):
    """Two bad points in a row look like a broken environment: the search stops. Rerun,
    each is tried once more, a third point trains, and both fail in the study."""
    calls = []
    real = run_module.train_and_evaluate
    bad: list[float] = []

    def first_two_points_fail(spec, *args, **kwargs):
        lr = spec.config["task"]["lr"]
        calls.append(lr)
        if lr not in bad and len(bad) < 2:
            bad.append(lr)
        if lr in bad:
            raise RuntimeError("CUDA out of memory")
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "train_and_evaluate", first_two_points_fail)
    with pytest.raises(TuneError, match="cause is likely not the points"):
        karate_search(tmp_path).run()
    assert len(calls) == 6 and len(bad) == 2
    got = karate_search(tmp_path).run()
    assert calls[6:8] == bad  # one more attempt at each, then a new point
    assert (got.trials_complete, got.trials_failed, got.budget) == (1, 2, 3)
    assert trial_states(tmp_path / "out") == {0: "FAIL", 1: "FAIL", 2: "COMPLETE"}


def test_a_point_whose_config_cannot_run_fails_at_once(tmp_path, monkeypatch):
    """A model width of 2.5 is refused when the run is resolved: the trial fails without
    a retry and without training, and the search goes on."""
    space = parse_space(
        "width",
        {
            "budget": 4,
            "inner_seeds": [100],
            "sampler_seed": 3,
            "params": {"model.hidden_channels": {"type": "categorical", "choices": [8, 2.5]}},
        },
    )
    widths = []
    real = run_module.train_and_evaluate

    def train(spec, *args, **kwargs):
        widths.append(spec.config["model"]["hidden_channels"])
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "train_and_evaluate", train)
    overrides = [*KARATE, f"paths.data_dir={tmp_path / 'data'}"]
    got_out = tmp_path / "out"
    got = Search(overrides, space, got_out).run()
    assert got.params == {"model.hidden_channels": 8}
    states = {(t.params["model.hidden_channels"], t.state.name) for t in study_trials(got_out)}
    assert states == {(8, "COMPLETE"), (2.5, "FAIL")}
    assert widths == [8]  # never trained at 2.5; a repeated point reuses its run
