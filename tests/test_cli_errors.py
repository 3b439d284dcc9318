"""Bad input to the command-line tools ends in one ``error:`` line naming the bad value
(no traceback) and leaves nothing half-written behind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from omegaconf import OmegaConf


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["dataset.loader.alphaa=3"], r"Could not override 'dataset.loader.alphaa'"),
        (["dataset.loader.alpha=-1"], r"alpha and b must be > 0, got alpha=-1"),
        (["dataset.loader.num_nodes=0"], r"num_nodes.*>= 1"),
        (["seed=abc"], r"seed='abc' is not an integer"),
        (["edges=as_released"], r"'ml_synthetic'.*available for \['blogcatalog'"),
        (["paths.data_mirror=/nope", "dataset=pcg"], r"data mirror '/nope' is not a directory"),
    ],
)
def test_the_analysis_cli_reports_bad_input_in_one_line(tmp_path, capsys, overrides, message):
    from graphnetz.analysis.__main__ import main

    out = tmp_path / "out"
    dataset = [] if any(o.startswith("dataset=") for o in overrides) else ["dataset=ml_synthetic"]
    with pytest.raises(SystemExit) as refused:
        main([*dataset, *overrides, f"out={out}", f"paths.data_dir={tmp_path / 'data'}"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    assert re.search(message, err), err
    assert not out.exists()


def test_the_analysis_cli_refuses_an_out_that_is_a_file_before_loading(tmp_path, capsys):
    from graphnetz.analysis import __main__ as cli

    target = tmp_path / "taken"
    target.write_text("keep")
    loaded = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli, "load_from_config", lambda cfg: loaded.append(cfg))
        with pytest.raises(SystemExit) as refused:
            cli.main(["dataset=ml_synthetic", f"out={target}"])
    assert refused.value.code == 2 and not loaded
    assert f"out={str(target)!r} is a file" in capsys.readouterr().err
    assert target.read_text() == "keep"


def test_the_analysis_cli_help_exits_0(capsys):
    from graphnetz.analysis.__main__ import main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert "dataset=<name>" in capsys.readouterr().out


def test_status_refuses_an_override_that_sweeps_no_value(tmp_path, capsys):
    from graphnetz.cli.status import main

    with pytest.raises(SystemExit) as refused:
        main([str(tmp_path / "sweep"), "dataset=karate", "seed=range(0)"])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "error: the override 'seed=range(0)' sweeps no value" in err
    assert not (tmp_path / "sweep").exists()


def test_status_of_a_sweep_launched_with_no_runs_names_the_override(tmp_path, capsys):
    from graphnetz.cli.status import main

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    launch = {"hydra": {"overrides": {"task": ["dataset=karate", "seed=range(0)"], "hydra": []}}}
    (sweep / "multirun.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(launch)))
    assert main([str(sweep)]) == 0
    captured = capsys.readouterr()
    assert "the override 'seed=range(0)' sweeps no value" in captured.err
    assert "0 runs" in captured.out


def test_a_sweep_of_no_runs_says_which_override_gave_none(tmp_path, monkeypatch, capsys):
    from hydra import initialize_config_dir

    from graphnetz.config_dir import CONF_DIR
    from graphnetz.sweep.callbacks import EVENTS_ENV, TOKEN_ENV, SweepCallback

    monkeypatch.setenv(TOKEN_ENV, "")  # restored after the test: the callback sets both
    monkeypatch.setenv(EVENTS_ENV, "")
    config = OmegaConf.create(
        {
            "hydra": {
                "sweep": {"dir": str(tmp_path)},
                "overrides": {"task": ["dataset=karate", "seed=range(0)"]},
                "sweeper": {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"},
            }
        }
    )
    callback = SweepCallback(poll_s=3600, progress_every_s=0)
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):  # as in a launch
        callback.on_multirun_start(config)
        assert callback.total == 0
        with pytest.raises(SystemExit) as failed:
            callback.on_multirun_end(config)
    assert failed.value.code == 1
    err = capsys.readouterr().err
    assert "the sweep has no runs (the override 'seed=range(0)' sweeps no value)" in err


def _report_csv(path):
    import pandas as pd

    rows = []
    for seed, (a, b) in enumerate([(0.80, 0.70), (0.82, 0.75), (0.81, 0.72)]):
        rows += [
            ("t1", "gcn", seed, "accuracy", a, "max"),
            ("t1", "gat", seed, "accuracy", b, "max"),
        ]
        rows += [("t1", "gcn", seed, "f1", a - 0.1, "max"), ("t1", "gat", seed, "f1", b, "max")]
    columns = ["task", "model", "seed", "metric", "value", "direction"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return str(path)


def _contents(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize("clash", ["file:tables", "folder:report.md", "file:figures"])
def test_a_report_target_of_the_wrong_kind_is_refused_before_anything_moves(tmp_path, clash):
    from graphnetz.report import BenchmarkReport

    kind, name = clash.split(":")
    out = tmp_path / "X"
    out.mkdir()
    (out / name).mkdir() if kind == "folder" else (out / name).write_text("mine")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    with pytest.raises(OSError, match=re.escape(repr(str(out / name)))):
        BenchmarkReport.from_csv(_report_csv(tmp_path / "r.csv")).write(out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before


def test_a_report_move_that_fails_midway_restores_the_earlier_report(tmp_path, monkeypatch):
    from graphnetz.report import BenchmarkReport, writer

    out = tmp_path / "X"
    csv = _report_csv(tmp_path / "r.csv")
    BenchmarkReport.from_csv(csv, equivalence_margin=0.01).write(out)
    (out / "notes.txt").write_text("mine")
    snapshot = _contents(out)
    real_move, calls = writer.shutil.move, []

    def failing(src, dst, *args, **kwargs):
        calls.append(dst)
        if Path(dst).name == "report.md" and Path(dst).parent == out:
            raise OSError(28, "No space left on device", str(dst))
        return real_move(src, dst, *args, **kwargs)

    monkeypatch.setattr(writer.shutil, "move", failing)
    report = BenchmarkReport.from_csv(csv)
    report.metric = "f1"
    with pytest.raises(OSError, match="No space left"):
        report.write(out)
    assert len(calls) > 5  # it failed after most files had moved in
    assert _contents(out) == snapshot
    assert not [p for p in out.iterdir() if p.name.startswith((".writing-", ".replaced-"))]


@pytest.mark.parametrize("option", ["--mirror", "--data-dir"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_list_datasets_refuses_a_folder_that_is_not_one(tmp_path, capsys, option, kind):
    from graphnetz.cli.list import main

    path = tmp_path / "nope"
    if kind == "file":
        path.write_text("")
    if kind == "missing" and option == "--data-dir":  # a fresh data folder: said, listed
        main(["list", "datasets", option, str(path)])
        assert f"warning: --data-dir {str(path)!r} does not exist" in capsys.readouterr().err
        return
    with pytest.raises(SystemExit) as refused:
        main(["list", "datasets", option, str(path)])
    assert refused.value.code == 2
    assert f"error: {option} {str(path)!r} is not a directory" in capsys.readouterr().err


def test_list_datasets_refuses_a_mirror_from_the_environment_that_is_not_a_folder(
    tmp_path, monkeypatch, capsys
):
    from graphnetz.cli.list import main
    from graphnetz.data.mirror import MIRROR_ENV

    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "nope"))
    with pytest.raises(SystemExit) as refused:
        main(["datasets"])
    assert refused.value.code == 2
    assert f"${MIRROR_ENV} {str(tmp_path / 'nope')!r}" in capsys.readouterr().err


@pytest.mark.parametrize("seeds", [[-1, 2], [2**32], [0, True]])
def test_a_search_refuses_bad_inner_seeds_before_anything_is_written(tmp_path, seeds):
    from graphnetz.tune.space import load_space
    from graphnetz.tune.study import Search, TuneError

    with pytest.raises(TuneError, match=r"inner seeds must be integers >= 0 \(below 2\*\*32\)"):
        Search(["dataset=karate", "model=gcn"], load_space("default"), tmp_path, inner_seeds=seeds)
    assert not any(tmp_path.iterdir())


def test_a_space_refuses_a_negative_inner_seed():
    from graphnetz.tune.space import SpaceError, parse_space

    params = {"task.lr": {"type": "float", "low": 0.001, "high": 0.1}}
    with pytest.raises(SpaceError, match=r"inner_seeds must be .*>= 0.*\[3, -1\]"):
        parse_space("s", {"params": params, "inner_seeds": [3, -1]})


@pytest.mark.parametrize(
    ("text", "named"), [("1,x", "'x'"), ("-1,2", "-1"), ("", "''"), ("1,,2", "''")]
)
def test_the_inner_seeds_argument_names_the_bad_value(capsys, text, named):
    from graphnetz.tune.__main__ import parse_args

    assert parse_args(["--inner-seeds", "3, 1"]).inner_seeds == [3, 1]
    with pytest.raises(SystemExit):
        parse_args([f"--inner-seeds={text}"])
    err = capsys.readouterr().err
    assert "argument --inner-seeds: expected comma-separated integers >= 0" in err
    assert f"got {named}" in err and "<lambda>" not in err


def test_records_save_of_only_unreadable_records_fails_naming_them(tmp_path, capsys):
    from graphnetz.cli.records import main

    sweep = tmp_path / "sweep"
    for job in ("0", "1"):
        (sweep / job).mkdir(parents=True)
        (sweep / job / "result.json").write_text("{cut short")
    assert main(["save", str(sweep), "--to", str(tmp_path / "archive")]) == 1
    err = capsys.readouterr().err
    assert "error: no record could be read:" in err
    assert str(sweep / "0" / "result.json") in err and str(sweep / "1" / "result.json") in err


def test_analyze_names_the_unreadable_records_on_the_console(tmp_path, capsys):
    from graphnetz.cli.analyze import main

    sweep = tmp_path / "sweep"
    (sweep / "broken").mkdir(parents=True)
    (sweep / "broken" / "result.json").write_text("{cut short")
    assert main([str(sweep), "--out", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err
    assert "0 unreadable" not in err
    assert f"unreadable: {sweep / 'broken' / 'result.json'} (" in err
