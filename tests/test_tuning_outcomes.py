"""What a search makes of its runs: the metric they name, the direction it is optimised in,
and runs that fail with an error (retried, outside the budget) or diverge (a bad point)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Data

from graphnetz.run_record import RunRecord
from graphnetz.training import run as run_module
from graphnetz.training.run import run_experiment
from graphnetz.tune import study as study_module
from graphnetz.tune.selected import tuned_config_text
from graphnetz.tune.space import parse_space
from graphnetz.tune.study import ERROR_ATTEMPTS, Search, TuneError

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
    split = ["train"] * 28 + ["val"] * 6 + ["test"] * 6
    return Data(
        edge_index=torch.tensor([[h for h, _, _ in seen], [t for _, _, t in seen]]),
        edge_type=torch.tensor([r for _, r, _ in seen]),
        train_mask=torch.tensor([s == "train" for s in split]),
        val_mask=torch.tensor([s == "val" for s in split]),
        test_mask=torch.tensor([s == "test" for s in split]),
        num_nodes=12,
        num_relations=2,
    )


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


def test_runs_failing_with_an_error_stop_the_search_without_spending_its_budget(
    tmp_path, monkeypatch, uninterrupted
):
    """A missing mirror fails every run: the search stops after a few attempts with the
    run's error; rerun once it is fixed, it selects what an uninterrupted search selects."""
    real = run_module.train_and_evaluate
    calls = []

    def no_mirror(spec, *args, **kwargs):
        calls.append(spec.seed)
        raise FileNotFoundError("data mirror /nowhere not found")

    monkeypatch.setattr(run_module, "train_and_evaluate", no_mirror)
    with pytest.raises(TuneError, match=r"3 times in a row .*data mirror /nowhere not found"):
        karate_search(tmp_path).run()
    assert calls == [100] * ERROR_ATTEMPTS  # the first trial's first run, nothing more

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
