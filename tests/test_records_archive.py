"""Record archives: a sweep's finished records saved, restored byte for byte, found by
resume, and never replaced in either direction."""

from __future__ import annotations

import json
import lzma

import pytest

from graphnetz.__main__ import main as graphnetz_main
from graphnetz.run_record import RECORD_NAME
from graphnetz.sweep.archive import restore_records, save_records
from graphnetz.training.resolve import composed_run_dir_name
from graphnetz.training.run import run_experiment

TINY = ("dataset=karate", "trainer.max_epochs=2")


def _sweep_with_two_runs(make_cfg, sweep):
    for seed in (0, 1):
        cfg = make_cfg(*TINY, f"seed={seed}")
        run_experiment(cfg, sweep / composed_run_dir_name(cfg))
    return sorted(sweep.rglob(RECORD_NAME))


def test_saved_records_restore_byte_for_byte_and_resume_skips_them(make_cfg, tmp_path):
    sweep, archive, again = tmp_path / "sweep", tmp_path / "archive", tmp_path / "again"
    originals = _sweep_with_two_runs(make_cfg, sweep)
    (sweep / originals[0].parent.name / "train.log").write_text("not archived")

    saved = save_records(sweep, archive)
    assert len(saved.written) == 2 and not saved.conflicts
    assert sorted(p.name for p in archive.iterdir()) == sorted(
        f"{p.parent.name}.json.xz" for p in originals
    )
    restored = restore_records(archive, again)
    assert len(restored.written) == 2
    for p in originals:
        assert (again / p.parent.name / RECORD_NAME).read_bytes() == p.read_bytes()
    assert not any(again.rglob("train.log"))

    cfg = make_cfg(*TINY, "seed=1", "resume=true")
    run_dir = again / "elsewhere"
    record = run_experiment(cfg, run_dir, done_under=again)
    assert record.status == "ok" and not (run_dir / RECORD_NAME).exists()  # not run again


def test_saving_and_restoring_twice_adds_nothing(make_cfg, tmp_path):
    sweep, archive = tmp_path / "sweep", tmp_path / "archive"
    _sweep_with_two_runs(make_cfg, sweep)
    save_records(sweep, archive)
    second = save_records(sweep, archive)
    assert second.written == [] and len(second.present) == 2
    back = restore_records(archive, sweep)
    assert back.written == [] and len(back.present) == 2 and not back.conflicts


def test_a_different_record_is_a_conflict_and_is_kept(make_cfg, tmp_path):
    sweep, archive, other = tmp_path / "sweep", tmp_path / "archive", tmp_path / "other"
    originals = _sweep_with_two_runs(make_cfg, sweep)
    save_records(sweep, archive)
    name = originals[0].parent.name
    changed = json.loads(originals[0].read_text())
    changed["wall_time_s"] = 123.0
    target = other / name / RECORD_NAME
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(changed))

    done = restore_records(archive, other)
    assert done.conflicts == [name] and json.loads(target.read_text())["wall_time_s"] == 123.0
    originals[0].write_text(json.dumps(changed))
    done = save_records(sweep, archive)
    assert done.conflicts == [name]
    kept = json.loads(lzma.decompress((archive / f"{name}.json.xz").read_bytes()))
    assert kept["wall_time_s"] != 123.0


def test_failed_and_half_written_records_are_not_archived(make_cfg, tmp_path):
    sweep, archive = tmp_path / "sweep", tmp_path / "archive"
    originals = _sweep_with_two_runs(make_cfg, sweep)
    failed = json.loads(originals[0].read_text())
    failed.update(status="failed", error="Traceback ...", metrics={})
    originals[0].write_text(json.dumps(failed))
    originals[1].write_text(originals[1].read_text()[:100])
    done = save_records(sweep, archive)
    assert done.written == []
    assert done.not_finished == [originals[0].parent.name]
    assert done.unreadable == [originals[1].parent.name]


def test_the_command_line_names_its_defaults_and_reports_conflicts(
    make_cfg, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    sweep = tmp_path / "outputs" / "multirun" / "mine"
    originals = _sweep_with_two_runs(make_cfg, sweep)
    assert graphnetz_main(["records", "save", str(sweep)]) == 0
    assert len(list((tmp_path / "results" / "mine").iterdir())) == 2
    originals[0].write_text(originals[0].read_text().replace('"ok"', '"ok" ', 1))
    assert graphnetz_main(["records", "restore", "--all"]) == 1  # the edited record
    out = capsys.readouterr().out
    assert "1 already there" in out and "1 conflicting (kept as they were)" in out


def test_the_command_line_saves_several_sweeps_each_to_its_own_archive(
    make_cfg, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    first, second = (tmp_path / "outputs" / "multirun" / name for name in ("a", "b"))
    _sweep_with_two_runs(make_cfg, first)
    _sweep_with_two_runs(make_cfg, second)
    assert graphnetz_main(["records", "save", str(first), str(second)]) == 0
    for name in ("a", "b"):
        assert len(list((tmp_path / "results" / name).glob("*.json.xz"))) == 2
    assert not list(second.glob("*.json.xz"))  # the second sweep is a source, not a target


def test_the_command_line_refuses_a_destination_of_the_wrong_kind(
    make_cfg, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    first, second = (tmp_path / "outputs" / "multirun" / name for name in ("a", "b"))
    _sweep_with_two_runs(make_cfg, first)
    _sweep_with_two_runs(make_cfg, second)
    for argv, message in (
        (["save", str(first), "--to", str(second)], "is a sweep folder, not an archive"),
        (["save", str(first), str(second), "--to", "x"], "--to names the destination of one"),
    ):
        with pytest.raises(SystemExit):
            graphnetz_main(["records", *argv])
        assert message in capsys.readouterr().err
    assert not list(second.glob("*.json.xz"))
    assert graphnetz_main(["records", "save", str(first)]) == 0
    with pytest.raises(SystemExit):
        graphnetz_main(["records", "restore", "results/a", "--to", "results/a"])
    assert "is an archive folder, not a sweep" in capsys.readouterr().err


def test_the_command_line_names_a_bad_folder_instead_of_a_traceback(
    make_cfg, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    sweep = tmp_path / "outputs" / "multirun" / "a"
    _sweep_with_two_runs(make_cfg, sweep)
    one_run = next(sweep.glob(f"*/{RECORD_NAME}")).parent
    (tmp_path / "a_file").write_text("")
    for argv, message in (
        (["records", "restore", "--all"], "there is none here"),
        (["records", "save", "nowhere"], "nowhere does not exist: give a sweep folder"),
        (["records", "save", str(sweep), "--to", "a_file"], "a_file is a file, not a folder"),
        (["records", "save", str(one_run)], "is one run's folder: give the sweep folder"),
        (["status", "a_file"], "'a_file' is a file, not a folder"),
    ):
        with pytest.raises(SystemExit):
            graphnetz_main(argv)
        assert message in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def _hand_written_sweep(sweep, seeds=(0, 1)):
    """A sweep folder with finished records written by hand (nothing trained)."""
    for seed in seeds:
        run = sweep / f"karate_node_cls_gcn_s{seed}"
        run.mkdir(parents=True)
        record = {
            "status": "ok",
            "task": "karate/node_cls",
            "model": "gcn",
            "seed": seed,
            "primary_metric": "accuracy",
            "metrics": {"test": {"accuracy": 0.5}},
        }
        (run / RECORD_NAME).write_text(json.dumps(record))
    return sweep


def test_a_source_of_the_wrong_kind_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sweep = _hand_written_sweep(tmp_path / "outputs" / "multirun" / "s")
    assert graphnetz_main(["records", "save", str(sweep)]) == 0
    archive = tmp_path / "results" / "s"
    (tmp_path / "empty").mkdir()
    for argv, message in (
        (["restore", str(sweep)], f"{sweep} is a sweep folder, not an archive"),
        (["save", str(archive)], f"{archive} is an archive folder (*.json.xz), not a sweep"),
        (["save", "empty"], "empty holds no run records (result.json)"),
        (["restore", "empty"], "empty holds no archived records (*.json.xz)"),
    ):
        with pytest.raises(SystemExit) as exit_:
            graphnetz_main(["records", *argv, "--to", str(tmp_path / "target")])
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "target").exists()


def test_two_sweeps_that_would_share_one_archive_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    first = _hand_written_sweep(tmp_path / "x" / "s")
    second = _hand_written_sweep(tmp_path / "y" / "s", seeds=(2,))
    with pytest.raises(SystemExit) as exit_:
        graphnetz_main(["records", "save", str(first), str(second)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"{first} and {second} would both go to results/s" in err
    assert not (tmp_path / "results").exists()


def test_the_help_prints_one_example_per_line_without_markup(capsys):
    with pytest.raises(SystemExit):
        graphnetz_main(["records", "--help"])
    out = capsys.readouterr().out
    assert "``" not in out and ":mod:" not in out
    examples = [line for line in out.splitlines() if line.startswith("    python -m graphnetz")]
    assert [e.split("#")[0].split()[4:] for e in examples] == [
        ["save", "outputs/multirun/repro_ml_real"],
        ["save", "outputs/multirun/a", "outputs/multirun/b"],
        ["restore", "results/repro_ml_real"],
        ["restore", "--all"],
    ]
