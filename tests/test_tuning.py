"""The hyperparameter search: validation only, resumable, and its +tuned config."""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.hydra_config import HydraConfig
from omegaconf import open_dict

from graphnetz.cli import train as train_cli
from graphnetz.config_dir import CONF_DIR
from graphnetz.report import BenchmarkReport
from graphnetz.report.tuning import summarize_tuning, tuning_lines, tuning_lines_of
from graphnetz.run_record import RunRecord
from graphnetz.training import run as run_module
from graphnetz.training.resolve import ConfigError, resolve_run
from graphnetz.training.run import run_experiment
from graphnetz.tune import study as study_module
from graphnetz.tune.selected import reused_seeds_warning, seed_sweep_command, write_tuned_config
from graphnetz.tune.space import SpaceError, load_space, parse_space
from graphnetz.tune.study import Search, TuneError

BASE = ["dataset=karate", "model=gcn", "trainer.max_epochs=3", "num_threads=1"]
SPACE = parse_space(
    "tiny",
    {
        "budget": 4,
        "inner_seeds": [100, 101],
        "sampler_seed": 7,
        "n_startup_trials": 2,
        "params": {
            "task.lr": {"type": "float", "low": 1e-3, "high": 0.1, "log": True},
            "model.hidden_channels": {"type": "categorical", "choices": [8, 16, 32]},
        },
    },
)


class Killed(BaseException):
    """Stands in for SIGKILL: nothing on the way up catches it."""


def search(tmp_path, name: str, data_dir) -> Search:
    return Search([*BASE, f"paths.data_dir={data_dir}"], SPACE, tmp_path / name)


@pytest.fixture(scope="module")
def clean(tmp_path_factory, data_dir_module):
    return search(tmp_path_factory.mktemp("clean"), "out", data_dir_module).run()


@pytest.fixture(scope="module")
def data_dir_module(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def test_the_choice_never_depends_on_test_metrics(
    tmp_path, monkeypatch, clean, data_dir_module, caplog
):
    """Test scores rewritten to oppose validation: the search selects the same point, and
    its log shows the trials' validation scores, never a test score."""
    original = run_module.train_and_evaluate

    def poisoned(spec, *args, **kwargs):
        outcome = original(spec, *args, **kwargs)
        val = outcome.metrics["val"]
        outcome.metrics["test"] = {k: 1.0 - v if k == "accuracy" else -v for k, v in val.items()}
        return outcome

    monkeypatch.setattr(run_module, "train_and_evaluate", poisoned)
    with caplog.at_level("INFO", logger="graphnetz"):
        got = search(tmp_path, "poisoned", data_dir_module).run()
    assert (got.params, got.value) == (clean.params, clean.value)
    logged = [r.getMessage() for r in caplog.records]
    assert any("val accuracy=" in line for line in logged)
    assert not any("test accuracy" in line for line in logged)
    trial_records = [RunRecord.read(p) for p in (tmp_path / "poisoned").rglob("result.json")]
    assert len(trial_records) == 2 * SPACE.budget  # every trial, both inner seeds
    assert all(r.test_value() == pytest.approx(1.0 - r.validation_value()) for r in trial_records)


def test_the_score_is_the_mean_validation_metric_of_the_inner_seeds(clean):
    best_dir = next(
        d
        for d in (study_module.Path(clean.storage).parent / "trials").iterdir()
        if RunRecord.read(d / "s100" / "result.json").config["task"]["lr"]
        == clean.params["task.lr"]
    )
    vals = [
        RunRecord.read(best_dir / f"s{s}" / "result.json").validation_value() for s in (100, 101)
    ]
    assert clean.value == pytest.approx(sum(vals) / 2)
    assert (clean.trials_complete, clean.trials_failed, clean.budget) == (4, 0, 4)


def test_a_killed_search_continues_to_the_same_choice(
    tmp_path, monkeypatch, clean, data_dir_module
):
    real = study_module.run_experiment
    calls = {"n": 0}

    def dies_on_sixth(cfg, run_dir):
        calls["n"] += 1
        if calls["n"] == 6:  # trial 2, second inner seed
            raise Killed
        return real(cfg, run_dir)

    monkeypatch.setattr(study_module, "run_experiment", dies_on_sixth)
    with pytest.raises(Killed):
        search(tmp_path, "killed", data_dir_module).run()
    monkeypatch.setattr(study_module, "run_experiment", real)

    trained = []
    original = run_module.train_and_evaluate
    monkeypatch.setattr(
        run_module,
        "train_and_evaluate",
        lambda s, *a, **k: trained.append(s.seed) or original(s, *a, **k),
    )
    got = search(tmp_path, "killed", data_dir_module).run()
    assert (got.params, got.value, got.trials_complete) == (clean.params, clean.value, 4)
    assert len(trained) == 2 * 4 - 5  # the five finished inner runs are not trained again


def test_cli_train_returns_the_validation_metric(tmp_path, data_dir_module):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose(
            "config",
            overrides=[*BASE, f"paths.data_dir={data_dir_module}", f"paths.output_dir={tmp_path}"],
            return_hydra_config=True,
        )
    cfg.hydra.runtime.output_dir = str(tmp_path / "run")
    HydraConfig.instance().set_config(cfg)  # what Hydra does before calling the task
    task_cfg = cfg.copy()
    with open_dict(task_cfg):
        del task_cfg["hydra"]
    try:
        value = train_cli.main(task_cfg)
    finally:
        HydraConfig.instance().cfg = None  # no Hydra job state for later tests
    record = RunRecord.read(tmp_path / "run" / "result.json")
    assert value == record.metrics["val"]["accuracy"]
    assert record.metrics["val"] != record.metrics["test"]  # the two differ here


def test_the_seed_sweep_takes_the_selected_point(tmp_path, clean, data_dir_module):
    write_tuned_config(clean, tmp_path)
    search_path = f"hydra.searchpath=[file://{tmp_path}]"
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        cfg = compose("config", overrides=[*BASE, f"+tuned={clean.study}", search_path])
        other = compose(
            "config", overrides=[*BASE, f"+tuned={clean.study}", search_path, "model=mlp"]
        )
    spec = resolve_run(cfg)
    assert spec.config["task"]["lr"] == clean.params["task.lr"]
    assert spec.config["model"]["hidden_channels"] == clean.params["model.hidden_channels"]
    tuning = spec.config["tuning"]
    assert (tuning["study"], tuning["budget"], tuning["metric"]) == (
        "karate_node_cls_gcn",
        4,
        "val/accuracy",
    )
    with pytest.raises(ConfigError, match="selected for .*'model': 'gcn'"):
        resolve_run(other)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["model=gcn,mlp"], "one \\(task, model\\)"),
        (["seed=3"], "inner_seeds"),
        (["task.lr=0.1"], "searched by space"),
    ],
)
def test_a_search_refuses_what_it_cannot_honour(tmp_path, overrides, message):
    with pytest.raises(TuneError, match=message):
        Search([*BASE, *overrides], SPACE, tmp_path)


def test_a_space_key_the_model_lacks_is_named(tmp_path):
    with pytest.raises(SpaceError, match="model.heads"):
        Search(BASE, load_space("gat"), tmp_path)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"task.lr": {"type": "uniform", "low": 0, "high": 1}}, "'uniform' is not one of"),
        ({"task.lr": {"type": "float", "low": 0.0, "high": 1.0, "log": True}}, "low > 0"),
        ({"task.lr": {"type": "categorical", "choices": []}}, "non-empty list"),
    ],
)
def test_a_bad_space_is_refused_by_name(params, message):
    with pytest.raises(SpaceError, match=message):
        parse_space("bad", {"params": params})


def test_an_unknown_space_lists_the_available_ones():
    with pytest.raises(SpaceError, match=r"available: \['default', 'gat'\]"):
        load_space("nope")


def test_the_report_says_which_runs_were_tuned_and_how(tmp_path, clean, data_dir_module):
    write_tuned_config(clean, tmp_path)
    records = []
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for seed, tuned in ((0, True), (1, True), (0, False)):
            extra = [f"+tuned={clean.study}", f"hydra.searchpath=[file://{tmp_path}]"] * tuned
            cfg = compose(
                "config",
                overrides=[*BASE, f"paths.data_dir={data_dir_module}", f"seed={seed}", *extra],
            )
            records.append(run_experiment(cfg, tmp_path / f"run{seed}{tuned}"))
    lines = tuning_lines(records)
    assert lines[1] == (
        f"- karate/node_cls gcn: 2 run(s) at study `karate_node_cls_gcn` (space `tiny`, "
        f"budget 4 trials, 4 ok; mean val/accuracy {clean.value:.4f} over inner seeds "
        f"[100, 101]): {clean.params}"
    )
    assert lines[2] == "- 1 run(s) used their configs' values (not tuned)"
    assert tuning_lines(records[2:]) == []
    assert tuning_lines([r.to_dict() for r in records]) == lines  # JSON records too
    report = BenchmarkReport.from_records([r.to_dict() for r in records])
    markdown = report.to_markdown()
    assert lines[0] in markdown and lines[1] in markdown and lines[2] in markdown
    report.to_json(tmp_path / "report.json")  # the summary survives a reload
    assert lines[1] in BenchmarkReport.from_json(tmp_path / "report.json").to_markdown()


def tuned_config(tmp_path, study, *overrides):
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        search_path = f"hydra.searchpath=[file://{tmp_path}]"
        return compose("config", overrides=[*BASE, f"+tuned={study}", search_path, *overrides])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("task.lr=0.5", "task.lr=0.5 in this run, but \\+tuned=.* was selected task.lr="),
        ("trainer.max_epochs=7", "max_epochs=7 in this run, but .* searched at .*max_epochs=3"),
    ],
)
def test_a_tuned_run_that_trains_another_point_is_refused(tmp_path, clean, override, message):
    write_tuned_config(clean, tmp_path)
    with pytest.raises(ConfigError, match=message):
        resolve_run(tuned_config(tmp_path, clean.study, override))
    resolve_run(tuned_config(tmp_path, clean.study, "num_threads=2"))  # no result changes


def test_a_tuned_config_of_another_study_is_not_replaced(tmp_path, clean):
    write_tuned_config(clean, tmp_path)
    other = dataclasses.replace(clean, storage="/elsewhere/study.journal")
    with pytest.raises(TuneError, match="holds the point of another study"):
        write_tuned_config(other, tmp_path)
    write_tuned_config(clean, tmp_path)  # the same study may write its point again


def test_a_rerun_with_a_smaller_budget_records_every_trial_it_chose_from(tmp_path, data_dir_module):
    first = search(tmp_path, "out", data_dir_module)
    first.budget = 2
    first.run()
    again = Search([*BASE, f"paths.data_dir={data_dir_module}"], SPACE, tmp_path / "out", budget=1)
    assert again.run().budget == 2
    reseeded = dataclasses.replace(SPACE, sampler_seed=8)
    with pytest.raises(TuneError, match="sampler_seed differ"):
        Search([*BASE, f"paths.data_dir={data_dir_module}"], reseeded, tmp_path / "out").run()


def test_a_space_with_an_unknown_key_is_refused_by_name():
    with pytest.raises(SpaceError, match=r"unknown key\(s\) \['budjet'\]"):
        parse_space("typo", {"budjet": 5, "params": SPACE.params})
    lr = {"type": "float", "low": 1e-3, "high": 0.1, "lg": True}
    with pytest.raises(SpaceError, match=r"params.task.lr: unknown key\(s\) \['lg'\]"):
        parse_space("typo", {"params": {"task.lr": lr}})
    assert parse_space("plain", {"params": SPACE.params}).inner_seeds == (100, 101, 102)


def test_repeated_inner_seeds_and_an_unfit_model_are_refused_before_training(tmp_path):
    with pytest.raises(TuneError, match="inner seeds must be distinct"):
        Search(BASE, SPACE, tmp_path, inner_seeds=[1, 1])
    with pytest.raises(TuneError, match="nothing to tune"):
        Search([*BASE, "model=gin"], SPACE, tmp_path)


def test_the_tune_command_prints_a_bad_config_as_an_error(tmp_path, capsys):
    from graphnetz.tune.__main__ import main

    assert main(["--out", str(tmp_path), "model=nosuch"]) == 2
    assert main(["--out", str(tmp_path), "dataset=karate", "task=graph_cls"]) == 2
    err = capsys.readouterr().err
    assert "error: " in err and "Traceback" not in err and "does not serve" in err


def test_the_tune_command_refuses_another_studys_file_before_training(tmp_path, capsys, clean):
    write_tuned_config(clean, tmp_path / "root")  # the point of the study in another --out
    argv = ["--out", str(tmp_path / "other"), "--config-root", str(tmp_path / "root"), *BASE]
    from graphnetz.tune.__main__ import main

    assert main(argv) == 2
    assert "holds the point of another study" in capsys.readouterr().err
    assert not (tmp_path / "other" / clean.study / "trials").exists()  # nothing trained


# ---------------------------------------------------------------- a resumed study
def clean_out(clean) -> Path:
    return Path(clean.storage).parent.parent


def test_a_rerun_on_another_base_config_is_refused_naming_the_change(clean, data_dir_module):
    """An edited conf/ file, another experiment or an override that changes a result all
    change the base config the trials trained; an override does it here."""
    changed = [*BASE, f"paths.data_dir={data_dir_module}", "model.num_layers=3"]
    with pytest.raises(TuneError, match=r"base config differs \(model.num_layers: 2 -> 3\)"):
        Search(changed, SPACE, clean_out(clean)).run()


def test_a_rerun_with_another_space_is_refused(clean, data_dir_module):
    widths = {"type": "categorical", "choices": [8, 16, 64]}
    other = dataclasses.replace(SPACE, params={**SPACE.params, "model.hidden_channels": widths})
    with pytest.raises(TuneError, match="space differ"):
        Search([*BASE, f"paths.data_dir={data_dir_module}"], other, clean_out(clean)).run()


def test_a_rerun_with_other_paths_and_threads_is_the_same_search(tmp_path, monkeypatch, clean):
    """Settings that change no result (a new data folder or mirror, threads) may differ."""
    trained = []
    monkeypatch.setattr(run_module, "train_and_evaluate", lambda s, *a, **k: trained.append(s))
    neutral = [o for o in BASE if not o.startswith("num_threads")]
    neutral += ["num_threads=2", f"paths.data_dir={tmp_path}", f"paths.data_mirror={tmp_path}"]
    got = Search(neutral, SPACE, clean_out(clean)).run()
    assert (got.params, got.value, got.metric, trained) == (
        clean.params,
        clean.value,
        "accuracy",
        [],
    )


# ---------------------------------------------------------------- malformed space files
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("params:\n  task.lr: {type: float, low: 1\n", "ParserError"),
        ("params:\n  task.lr:\n    type: float\n    low: ${nope}\n    high: 1\n", "'nope'"),
        ("params:\n  a: {type: int, low: 1, high: 2}\n  a: {type: int, low: 1, high: 3}\n", "dup"),
    ],
)
def test_an_unreadable_space_file_is_refused_naming_the_file(tmp_path, text, message):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    expected = f"{re.escape(str(path))} cannot be read: .*{message}.*a space file is"
    with pytest.raises(SpaceError, match=expected):
        load_space(str(path))


def test_a_categorical_choice_must_be_one_value(tmp_path, capsys):
    path = tmp_path / "pairs.yaml"
    path.write_text(
        "params:\n  model.hidden_channels: {type: categorical, choices: [[8, 16], 32]}\n"
    )
    with pytest.raises(SpaceError, match=r"choice \[8, 16\] is not a single value; a choice is"):
        load_space(str(path))
    from graphnetz.tune.__main__ import main

    assert main(["--space", str(path), "--out", str(tmp_path), *BASE]) == 2
    err = capsys.readouterr().err
    assert "is not a single value" in err and "Traceback" not in err


# ---------------------------------------------------------------- the suggested seed sweep
def test_the_seed_sweep_command_quotes_each_override_and_adds_the_search_path(tmp_path, clean):
    odd = dataclasses.replace(clean, base_overrides=(*BASE, f"paths.data_dir={tmp_path}/a b"))
    words = shlex.split(seed_sweep_command(odd, tmp_path / "root"))
    assert words == [
        "python",
        "train.py",
        "-m",
        "+tuned=karate_node_cls_gcn",
        *BASE,
        f"paths.data_dir={tmp_path}/a b",
        f"hydra.searchpath=[file://{tmp_path / 'root'}]",
        "seed=range(10)",
    ]
    plain = seed_sweep_command(clean)  # the checkout's conf/: no search path
    assert "hydra.searchpath" not in plain and plain.endswith(" 'seed=range(10)'")


def test_inner_seeds_among_the_sweeps_seeds_are_warned_about(tmp_path, capsys, data_dir_module):
    assert reused_seeds_warning([100, 101, 102]) is None
    assert "inner seeds [0, 9]" in reused_seeds_warning([0, 9, 10])
    from graphnetz.tune.__main__ import main

    root, out = tmp_path / "root", tmp_path / "out"
    argv = ["--out", str(out), "--config-root", str(root), "--budget", "1", "--inner-seeds", "0"]
    assert main([*argv, *BASE, f"paths.data_dir={data_dir_module}"]) == 0
    printed = capsys.readouterr()
    assert printed.err.count("warning: inner seeds [0] are also seeds of the suggested") == 2
    command = printed.out.split("seed sweep: ")[1].strip()
    words = shlex.split(command)
    assert words[:4] == ["python", "train.py", "-m", "+tuned=karate_node_cls_gcn"]
    assert words[-1] == "seed=range(10)"
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):  # the command composes
        cfg = compose("config", overrides=[*words[3:-1], "seed=0"])
    assert resolve_run(cfg).config["tuning"]["study"] == "karate_node_cls_gcn"
    assert f"# Use: {command}" in (root / "tuned" / "karate_node_cls_gcn.yaml").read_text()


# ---------------------------------------------------------------- the report
def test_the_report_keeps_two_studies_of_one_name_apart(clean):
    here = clean.tuning_block()
    elsewhere = {**here, "storage": "/elsewhere/study.journal", "value": 0.5}
    summary = summarize_tuning([here, here, elsewhere, None])
    runs = [(s["storage"], s["runs"], s["value"]) for s in summary["studies"]]
    assert runs == [(clean.storage, 2, clean.value), ("/elsewhere/study.journal", 1, 0.5)]
    lines = tuning_lines_of(summary)
    assert f"study `karate_node_cls_gcn` in `{clean.storage}` (space" in lines[1]
    assert "study `karate_node_cls_gcn` in `/elsewhere/study.journal` (space" in lines[2]
    assert "0.5000 over inner seeds" in lines[2]
