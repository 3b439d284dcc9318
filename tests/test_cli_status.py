"""``python -m graphnetz status`` on the records analyze.py cannot use, on runs without a
full identity, on glob sweeps and on a damaged ``multirun.yaml``; its dry-run command.

Records are written by hand (nothing is trained): each named by the identity the sweep's
config resolves to, so status matches it to a planned run as it would a trained one."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from graphnetz.__main__ import main
from graphnetz.cli import status as status_module
from graphnetz.config_dir import CONF_DIR
from graphnetz.run_record import RECORD_NAME
from graphnetz.training.resolve import resolve_run

TINY = ("dataset=karate", "trainer.max_epochs=3")


@pytest.fixture
def spec(make_cfg):
    """The resolved run of ``TINY`` and ``seed``, as the sweep plans it."""
    return lambda seed, *more: resolve_run(make_cfg(*TINY, f"seed={seed}", *more))


def ok_record(run, **changes) -> dict:
    raw = {
        "schema_version": 2,
        "status": "ok",
        "task": run.task_key,
        "dataset": run.dataset,
        "task_type": run.task_type,
        "model": run.model,
        "seed": run.seed,
        "primary_metric": "accuracy",
        "direction": "max",
        "metrics": {"test": {"accuracy": 0.5}},
        "identity": run.identity,
        "wall_time_s": 1.0,
    }
    raw.update(changes)
    return raw


def write(folder: Path, name: str, raw: dict | str) -> Path:
    (folder / name).mkdir(parents=True, exist_ok=True)
    text = raw if isinstance(raw, str) else json.dumps(raw)
    (folder / name / RECORD_NAME).write_text(text)
    return folder / name


def status(capsys, *args) -> list[str]:
    assert main(["status", *map(str, args)]) == 0
    return capsys.readouterr().out.splitlines()


def row(lines: list[str], task: str, model: str) -> dict[str, str]:
    header = next(line.split() for line in lines if line.startswith("task "))
    found = [line.split() for line in lines if line.split()[:2] == [task, model]]
    assert len(found) == 1, lines
    return dict(zip(header, found[0], strict=True))


def command_of(lines: list[str]) -> list[str]:
    summary = next(line for line in lines if line.startswith("dry run of `"))
    return shlex.split(summary.split("`")[1])


# ------------------------------------------------------- records analyze cannot use
def test_records_analyze_cannot_read_are_unreadable_and_say_why(spec, tmp_path, capsys):
    sweep = tmp_path / "sweep"
    runs = [spec(seed) for seed in range(6)]
    write(sweep, runs[0].run_dir_name, ok_record(runs[0]))
    write(sweep, runs[1].run_dir_name, json.dumps(ok_record(runs[1]))[:60])  # cut short
    (sweep / runs[1].run_dir_name / ".hydra").mkdir()  # a run folder: still not "started"
    write(sweep, runs[2].run_dir_name, ok_record(runs[2], status="timeout"))
    write(sweep, runs[3].run_dir_name, ok_record(runs[3], schema_version=3))
    write(sweep, runs[4].run_dir_name, ok_record(runs[4], metrics={"test": {"loss": 1.0}}))
    write(
        sweep,
        runs[5].run_dir_name,
        ok_record(runs[5], metrics={"test": {"accuracy": float("nan")}}),
    )
    lines = status(capsys, sweep, *TINY, "seed=range(6)")
    counts = row(lines, "karate/node_cls", "gcn")
    # analyze.py: 1 analysed, 1 failed (not a finite number), 4 unreadable
    assert (counts["ok"], counts["failed"], counts["unreadable"]) == ("1", "1", "4")
    assert (counts["started"], counts["missing"]) == ("0", "0")
    text = "\n".join(lines)
    assert "[unreadable] karate/node_cls gcn seed=2: unknown status 'timeout'" in text
    assert "seed=3: unsupported schema_version 3" in text
    assert "seed=4: missing metrics.test.accuracy" in text
    assert "JSONDecodeError" in text
    assert "[failed] karate/node_cls gcn seed=5: test accuracy is not a finite number" in text


def test_a_nan_metric_counts_as_failed_though_resume_keeps_it(spec, tmp_path, capsys):
    sweep = tmp_path / "sweep"
    run = spec(0)
    write(sweep, run.run_dir_name, ok_record(run, metrics={"test": {"accuracy": float("inf")}}))
    lines = status(capsys, sweep, *TINY, "seed=0")
    assert row(lines, "karate/node_cls", "gcn")["failed"] == "1"
    assert any("1 runs, 1 already done, 0 to run" in line for line in lines)
    keep = [line for line in lines if line.startswith("  keep [failed]")]
    assert len(keep) == 1 and "resume=true does not run it again" in keep[0]


# ------------------------------------------------------------ the dry run's command
def test_the_dry_run_command_resumes_into_this_folder_and_pastes_into_a_shell(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    lines = status(capsys, sweep, *TINY, "seed=range(3)", "hydra/launcher=pool")
    assert command_of(lines) == [
        "python",
        "train.py",
        "-m",
        *TINY,
        "seed=range(3)",
        "resume=true",
        "hydra/launcher=pool",
        f"hydra.sweep.dir={sweep}",
    ]


def test_a_sweep_folder_hydra_cannot_read_plainly_is_quoted_for_it(tmp_path, capsys):
    sweep = tmp_path / "a sweep, (ünï cödé)"
    sweep.mkdir()
    lines = status(capsys, sweep, *TINY, "seed=0")
    override = command_of(lines)[-1]
    parsed = OverridesParser.create().parse_override(override)
    assert parsed.key_or_group == "hydra.sweep.dir" and parsed.value() == str(sweep)


# ----------------------------------------------------------------- glob sweeps
def test_a_glob_sweep_is_expanded_over_the_groups_options(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    models = sorted(p.stem for p in (CONF_DIR / "model").glob("gc*.yaml"))
    assert len(models) >= 2
    lines = status(capsys, sweep, "model=glob(gc*)", *TINY, "seed=0")
    assert any(f"{len(models)} runs, 0 already done, {len(models)} to run" in x for x in lines)
    for model in models:
        assert row(lines, "karate/node_cls", model)["missing"] == "1"


# ------------------------------------------------------ runs without a full identity
def test_a_schema_1_record_is_the_planned_run_of_its_seed_and_is_run_again(spec, tmp_path, capsys):
    sweep = tmp_path / "sweep"
    old, new = spec(0), spec(1)
    raw = ok_record(old, schema_version=1)
    del raw["identity"]
    write(sweep, "0_karate_gcn_s0", raw)  # an old folder named by job number
    write(sweep, new.run_dir_name, ok_record(new))
    lines = status(capsys, sweep, *TINY, "seed=0,1")
    assert lines[0].endswith(": 2 runs")
    counts = row(lines, "karate/node_cls", "gcn")
    assert (counts["ok"], counts["missing"]) == ("2", "0")
    todo = [line for line in lines if line.startswith("  run ")]
    assert len(todo) == 1 and "seed=0" in todo[0] and "schema-1 record" in todo[0]


def test_a_schema_1_record_rerun_by_resume_is_done_and_noted_no_more(spec, tmp_path, capsys):
    sweep = tmp_path / "sweep"
    run = spec(0)
    raw = ok_record(run, schema_version=1)
    del raw["identity"]
    write(sweep, "0_karate_gcn_s0", raw)  # the old record, and its rerun by resume=true
    write(sweep, run.run_dir_name, ok_record(run))
    lines = status(capsys, sweep, *TINY, "seed=0")
    assert not [line for line in lines if line.startswith("  run ")]
    assert not [line for line in lines if "schema-1" in line]


def test_a_started_job_number_folder_is_its_configs_run(make_cfg, spec, tmp_path, capsys):
    sweep = tmp_path / "sweep"
    (sweep / "0_karate_gcn_s0" / ".hydra").mkdir(parents=True)
    cfg = make_cfg(*TINY, "seed=0")
    OmegaConf.save(cfg, sweep / "0_karate_gcn_s0" / ".hydra" / "config.yaml")
    write(sweep, spec(1).run_dir_name, ok_record(spec(1)))
    lines = status(capsys, sweep, *TINY, "seed=0,1")
    assert lines[0].endswith(": 2 runs")
    counts = row(lines, "karate/node_cls", "gcn")
    assert (counts["ok"], counts["started"], counts["missing"]) == ("1", "1", "0")


# --------------------------------------------------------- configs that cannot run
def test_a_planned_run_that_cannot_resolve_is_shown_as_will_fail(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    lines = status(capsys, sweep, *TINY, "task=graph_cls", "seed=0")
    [todo] = [line for line in lines if line.startswith("  run ")]
    assert "[will fail: ConfigError: dataset 'karate' does not serve task type 'graph_cls'" in todo
    assert row(lines, "karate/graph_cls", "gcn")["missing"] == "1"


def test_a_record_failed_at_resolution_lands_in_its_dataset_and_task(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    write(
        sweep,
        "run",
        {
            "status": "failed",
            "dataset": "karate",
            "model": "gcn",
            "seed": 0,
            "reason": "ConfigError: dataset 'karate' does not serve task type 'graph_cls'",
            "config": {"dataset": {"name": "karate"}, "task": {"type": "graph_cls"}},
        },
    )
    lines = status(capsys, sweep)
    assert row(lines, "karate/graph_cls", "gcn")["failed"] == "1"


def test_a_blank_reason_is_shown_as_none_given_and_the_error_used(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    failed = {"status": "failed", "task": "karate/node_cls", "model": "gcn", "reason": "  \n "}
    write(sweep, "a", {**failed, "seed": 0})
    write(sweep, "b", {**failed, "seed": 1, "error": "Traceback ...\n  x\nKeyError: 'lr'\n"})
    text = "\n".join(status(capsys, sweep))
    assert "gcn seed=0: no reason given" in text
    assert "gcn seed=1: KeyError: 'lr'" in text


def test_an_internal_error_is_not_reported_as_a_bad_override(tmp_path, monkeypatch):
    def broken(sweep):
        raise RuntimeError("a bug in status itself")

    monkeypatch.setattr(status_module, "found_runs", broken)
    with pytest.raises(RuntimeError, match="a bug in status itself"):
        main(["status", str(tmp_path)])


def test_a_bad_override_is_named_without_a_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["status", str(tmp_path), "model=no_such_model"])
    assert exit_.value.code == 2 and "no_such_model" in capsys.readouterr().err


# ------------------------------------------------------------- multirun.yaml
@pytest.mark.parametrize("text", ["", "hydra:\n  overrides:\n    task: [model=gcn,"])
def test_an_unreadable_multirun_yaml_is_named_and_the_runs_found_shown(
    spec, tmp_path, capsys, text
):
    sweep = tmp_path / "sweep"
    write(sweep, spec(0).run_dir_name, ok_record(spec(0)))
    (sweep / "multirun.yaml").write_text(text)
    assert main(["status", str(sweep)]) == 0
    captured = capsys.readouterr()
    assert f"warning: {sweep / 'multirun.yaml'}" in captured.err
    assert row(captured.out.splitlines(), "karate/node_cls", "gcn")["ok"] == "1"


def test_a_multirun_yaml_naming_an_option_that_is_not_there_is_named_and_the_runs_shown(
    spec, tmp_path, capsys
):
    # a mistyped extend (model=gcn,gcnn) fails before training, but Hydra has already
    # rewritten multirun.yaml with it
    sweep = tmp_path / "sweep"
    write(sweep, spec(0).run_dir_name, ok_record(spec(0)))
    task = [*TINY, "model=gcn,gcnn", "resume=true"]
    (sweep / "multirun.yaml").write_text(json.dumps({"hydra": {"overrides": {"task": task}}}))
    assert main(["status", str(sweep)]) == 0
    captured = capsys.readouterr()
    [warning] = captured.err.splitlines()
    assert warning.startswith(f"warning: {sweep / 'multirun.yaml'}")
    assert "'model/gcnn'" in warning and "gcn, gcn_lpa" in warning
    assert row(captured.out.splitlines(), "karate/node_cls", "gcn")["ok"] == "1"


# ------------------------------------------------------------ the sweep's folder
def test_a_sweep_not_launched_yet_is_dry_run_from_its_overrides(tmp_path, capsys):
    sweep = tmp_path / "not yet"
    lines = status(capsys, sweep, *TINY, "seed=0,1")
    assert any("2 runs, 0 already done, 2 to run" in line for line in lines)
    assert row(lines, "karate/node_cls", "gcn")["missing"] == "2"
    assert command_of(lines)[-1] == f"hydra.sweep.dir={sweep}"
    assert not sweep.exists()  # a dry run creates nothing


def test_a_missing_folder_without_overrides_says_how_to_dry_run(tmp_path, capsys):
    sweep = tmp_path / "typo"
    with pytest.raises(SystemExit) as exit_:
        main(["status", str(sweep)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"{str(sweep)!r} does not exist" in err
    assert f"python -m graphnetz status {sweep} OVERRIDES" in err


def test_a_file_for_the_folder_is_refused_as_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("")
    with pytest.raises(SystemExit) as exit_:
        main(["status", str(tmp_path / "f"), *TINY])
    assert exit_.value.code == 2 and "is a file, not a folder" in capsys.readouterr().err


def test_the_help_is_plain_text_with_an_example_per_line(capsys):
    with pytest.raises(SystemExit):
        main(["status", "--help"])
    out = capsys.readouterr().out
    assert "``" not in out
    assert "python -m graphnetz status SWEEP_DIR [OVERRIDES ...]: where a sweep stands" in out
    examples = [line for line in out.splitlines() if line.startswith("  python -m graphnetz")]
    assert len(examples) == 2


def test_status_without_a_folder_asks_for_the_folder_only(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["status"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "required: SWEEP_DIR" in err and "OVERRIDES" not in err.splitlines()[-1]


def test_a_rerun_folder_adds_to_time_spent_not_to_time_per_run(spec, tmp_path, capsys):
    # seed 0 ran twice (a relaunch without resume=true writes <dir>_rerun1), 100 s each;
    # seed 1 is still to run: it should take one run's time, 100 s, not both folders' 200 s
    sweep = tmp_path / "sweep"
    run = spec(0)
    write(sweep, run.run_dir_name, ok_record(run, wall_time_s=100.0))
    write(sweep, f"{run.run_dir_name}_rerun1", ok_record(run, wall_time_s=100.0))
    counts = row(status(capsys, sweep, *TINY, "seed=0,1"), "karate/node_cls", "gcn")
    assert (counts["ok"], counts["missing"]) == ("1", "1")
    assert counts["spent"] == "3.3min"  # 200 s, both folders
    assert counts["left(est.)"] == "100s"
