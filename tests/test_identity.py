"""A run's identity: what it is (a hash of the result-bearing config), what it ignores, and
what resume and the run directories do with it."""

from __future__ import annotations

import hashlib
import json

import pytest

from graphnetz.data.mirror import MIRROR_ENV
from graphnetz.run_identity import identity_in_name
from graphnetz.run_record import RECORD_NAME, RunRecord
from graphnetz.training.resolve import ConfigError, composed_run_dir_name, resolve_run
from graphnetz.training.run import completed_record, run_experiment

TINY = ("dataset=karate", "trainer.max_epochs=2")


def identity(make_cfg, *overrides: str) -> str:
    return resolve_run(make_cfg(*TINY, *overrides)).identity


def test_the_identity_is_the_sha256_of_the_canonical_result_config(make_cfg):
    spec = resolve_run(make_cfg(*TINY))
    neutral = ("resume", "num_threads", "checkpoint_every_s", "fit_loop", "stack_seeds", "paths")
    kept = {k: v for k, v in spec.config.items() if k not in neutral}
    kept["trainer"] = {
        k: v
        for k, v in kept["trainer"].items()
        if k not in ("enable_progress_bar", "enable_model_summary", "logger")
    }
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"))
    assert spec.identity == hashlib.sha256(text.encode()).hexdigest()


def test_execution_settings_and_paths_are_not_part_of_the_identity(make_cfg, tmp_path, monkeypatch):
    base = identity(make_cfg)
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path))
    from_env = identity(make_cfg)
    monkeypatch.delenv(MIRROR_ENV)
    assert from_env == base == identity(make_cfg, f"paths.data_mirror={tmp_path}")
    for neutral in ("num_threads=1", "resume=true", "checkpoint_every_s=0", "fit_loop=lightning"):
        assert identity(make_cfg, neutral) == base, neutral
    assert identity(make_cfg, "trainer.enable_progress_bar=true") == base


@pytest.mark.parametrize(
    "changed", ["task.lr=0.05", "task=link_pred", "seed=1", "model=mlp", "trainer.max_epochs=3"]
)
def test_a_result_bearing_setting_is_a_new_identity(make_cfg, changed):
    assert identity(make_cfg, changed) != identity(make_cfg)


def test_the_run_directory_is_named_readably_by_the_identity(make_cfg):
    spec = resolve_run(make_cfg(*TINY, "seed=4"))
    name = composed_run_dir_name(make_cfg(*TINY, "seed=4"))
    assert name == f"karate_node_cls_gcn_s4_{spec.identity[:12]}"
    assert identity_in_name(name) == spec.identity[:12]
    assert identity_in_name("3_karate_gcn_s0") is None  # an older job-number directory


def test_a_config_that_cannot_run_still_gets_a_directory_of_its_own(make_cfg):
    bad = make_cfg(*TINY, "trainer.max_epochs=0")
    with pytest.raises(ConfigError):
        resolve_run(bad)
    name = composed_run_dir_name(bad)
    assert name.startswith("karate_node_cls_gcn_s0_") and identity_in_name(name)
    assert name != composed_run_dir_name(make_cfg(*TINY, "trainer.max_epochs=-1"))


def test_the_record_stores_its_identity_and_thread_count(make_cfg, tmp_path, one_thread):
    record = run_experiment(make_cfg(*TINY), tmp_path / "run")
    stored = RunRecord.read(tmp_path / "run" / RECORD_NAME)
    assert stored.identity == record.identity == identity(make_cfg)
    assert stored.num_threads == 1


def test_an_older_record_without_identity_has_it_from_its_resolved_config(make_cfg, tmp_path):
    run_experiment(make_cfg(*TINY), tmp_path)
    raw = json.loads((tmp_path / RECORD_NAME).read_text())
    del raw["identity"]
    assert RunRecord.from_dict(raw).run_identity() == identity(make_cfg)
    assert RunRecord.from_dict({**raw, "schema_version": 1}).run_identity() is None


def test_resume_finds_a_finished_run_in_an_old_job_number_directory(make_cfg, tmp_path):
    sweep = tmp_path / "sweep"
    first = run_experiment(make_cfg(*TINY), sweep / "0_karate_gcn_s0")
    new_dir = sweep / composed_run_dir_name(make_cfg(*TINY))
    again = run_experiment(make_cfg(*TINY, "resume=true"), new_dir, done_under=sweep)
    assert again == first and not (new_dir / RECORD_NAME).exists()  # not run again
    other = resolve_run(make_cfg(*TINY, "seed=1", "resume=true"))
    assert completed_record(other, sweep / "x", done_under=sweep) is None


def test_a_record_of_another_identity_is_never_overwritten(make_cfg, tmp_path):
    """A run directory named without the identity (``hydra.sweep.subdir=${hydra.job.num}``)
    reused by another setting keeps its record; the new one goes next to it."""
    run_dir = tmp_path / "0"
    first = run_experiment(make_cfg(*TINY, "task.lr=0.01"), run_dir)
    before = (run_dir / RECORD_NAME).read_text()
    second = run_experiment(make_cfg(*TINY, "task.lr=0.2"), run_dir)
    assert (run_dir / RECORD_NAME).read_text() == before
    sibling = tmp_path / f"0_{second.identity[:12]}"
    assert RunRecord.read(sibling / RECORD_NAME).identity == second.identity != first.identity


def test_a_rerun_without_resume_never_overwrites_its_own_finished_record(make_cfg, tmp_path):
    """Relaunched without resume=true, a finished run trains again beside its record; a
    rerun that fails (here: its data cannot load) leaves the finished record as it was."""
    run_dir = tmp_path / "karate_gcn"
    first = run_experiment(make_cfg(*TINY), run_dir)
    kept = (run_dir / RECORD_NAME).read_bytes()

    def unavailable():
        raise FileNotFoundError("no mirror here")

    failed = run_experiment(make_cfg(*TINY), run_dir, load_data=unavailable)
    assert failed.status == "failed" and failed.identity == first.identity
    assert (run_dir / RECORD_NAME).read_bytes() == kept
    assert RunRecord.read(tmp_path / "karate_gcn_rerun1" / RECORD_NAME).status == "failed"
    again = run_experiment(make_cfg(*TINY), run_dir)  # replaces the failed rerun only
    assert again.status == "ok" and again.run_dir == str(tmp_path / "karate_gcn_rerun1")
    third = run_experiment(make_cfg(*TINY), run_dir)
    assert third.run_dir == str(tmp_path / "karate_gcn_rerun2")
    assert (run_dir / RECORD_NAME).read_bytes() == kept
    resumed = run_experiment(make_cfg(*TINY, "resume=true"), run_dir)  # nothing trained
    assert resumed.run_dir == str(run_dir) and resumed.metrics == first.metrics
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "karate_gcn",
        "karate_gcn_rerun1",
        "karate_gcn_rerun2",
    ]


def test_a_failure_recorded_through_a_taken_folder_keeps_the_siblings_finished_record(
    make_cfg, tmp_path
):
    """A folder named by job number holds another run's record; this run's finished
    record is in the sibling named after its identity. A failure recorded for this run
    through the first folder (its worker died) must not land on that finished record."""
    from graphnetz.training.run import record_failure

    run_dir = tmp_path / "0"
    run_experiment(make_cfg(*TINY, "task.lr=0.01"), run_dir)
    mine = run_experiment(make_cfg(*TINY, "task.lr=0.2"), run_dir)
    sibling = tmp_path / f"0_{mine.identity[:12]}"
    kept = (sibling / RECORD_NAME).read_bytes()
    failed = record_failure(make_cfg(*TINY, "task.lr=0.2"), run_dir, RuntimeError("died"))
    assert (sibling / RECORD_NAME).read_bytes() == kept
    rerun = tmp_path / f"0_{mine.identity[:12]}_rerun1"
    assert failed.run_dir == str(rerun) and RunRecord.read(rerun / RECORD_NAME).status == "failed"


def test_a_resumed_run_finished_meanwhile_by_another_writer_keeps_that_record(
    make_cfg, tmp_path, monkeypatch
):
    """Two processes extending one sweep with resume=true may train the same run: the
    first record written stays (the second writer neither overwrites it nor writes a
    rerun folder)."""
    from graphnetz.training import run as run_module

    run_dir = tmp_path / "karate_gcn"
    other = tmp_path / "elsewhere"
    first = run_experiment(make_cfg(*TINY), other)  # what the other writer wrote
    train = run_module.train_and_evaluate

    def other_writer_finishes_first(*args, **kwargs):
        outcome = train(*args, **kwargs)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / RECORD_NAME).write_bytes((other / RECORD_NAME).read_bytes())
        return outcome

    monkeypatch.setattr(run_module, "train_and_evaluate", other_writer_finishes_first)
    kept = run_experiment(make_cfg(*TINY, "resume=true", "stack_seeds=false"), run_dir)
    assert (run_dir / RECORD_NAME).read_bytes() == (other / RECORD_NAME).read_bytes()
    assert kept.metrics == first.metrics and kept.run_dir == str(run_dir)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "karate_gcn"]


def test_the_run_writes_into_its_own_folder_from_the_start_and_says_where(make_cfg, tmp_path):
    """The folder is chosen before training (a checkpoint goes where the record will), and
    the process says where the record went: a sweep's tally reads it there."""
    from graphnetz.training.run import take_record_dir

    run_dir = tmp_path / "0"
    run_experiment(make_cfg(*TINY, "task.lr=0.01"), run_dir)
    assert take_record_dir() == run_dir and take_record_dir() is None
    second = run_experiment(make_cfg(*TINY, "task.lr=0.2", "checkpoint_every_s=0"), run_dir)
    sibling = tmp_path / f"0_{second.identity[:12]}"
    assert take_record_dir() == sibling
    assert sorted(p.name for p in run_dir.iterdir()) == [RECORD_NAME]  # no checkpoint left
    renamed = tmp_path / "moved"
    sibling.rename(renamed)
    again = run_experiment(
        make_cfg(*TINY, "task.lr=0.2", "resume=true"), run_dir, done_under=tmp_path
    )
    assert again.identity == second.identity and take_record_dir() == renamed


def test_a_finished_record_of_unknown_identity_is_never_overwritten(make_cfg, tmp_path):
    """A schema-1 record (no identity, config stored as composed) that finished stays."""
    run_dir = tmp_path / "0"
    run_experiment(make_cfg(*TINY, "model=mlp"), run_dir)
    old = json.loads((run_dir / RECORD_NAME).read_text())
    for key in ("schema_version", "identity"):
        old.pop(key)
    (run_dir / RECORD_NAME).write_text(json.dumps(old))
    assert RunRecord.read(run_dir / RECORD_NAME).run_identity() is None
    record = run_experiment(make_cfg(*TINY), run_dir)
    assert json.loads((run_dir / RECORD_NAME).read_text()) == old
    assert (tmp_path / f"0_{record.identity[:12]}" / RECORD_NAME).is_file()


def test_a_job_whose_worker_died_keeps_its_checkpoint_beside_the_failed_record(make_cfg, tmp_path):
    from graphnetz.training.checkpoint import CHECKPOINT_NAME
    from graphnetz.training.run import record_failure

    (tmp_path / CHECKPOINT_NAME).write_bytes(b"saved epochs")
    record = record_failure(make_cfg(*TINY), tmp_path, RuntimeError("its worker died twice"))
    assert record.status == "failed" and (tmp_path / CHECKPOINT_NAME).is_file()


@pytest.mark.parametrize("value", ["no", "yes", "1"])
def test_resume_takes_true_or_false_only(make_cfg, value):
    with pytest.raises(ConfigError, match=rf"resume='?{value}'? is not valid; choose true"):
        resolve_run(make_cfg(*TINY, f"resume={value}"))


def test_a_diverging_run_is_recorded_as_diverged_with_its_epoch(make_cfg, tmp_path):
    record = run_experiment(make_cfg("dataset=karate", "trainer.max_epochs=3", "task.lr=1e30"))
    assert record.status == "diverged"
    assert record.diverged_epoch is not None and 0 <= record.diverged_epoch < 3
    assert f"epoch {record.diverged_epoch}" in record.reason and "nan" in record.reason
    assert record.finished  # the same config and seed diverge again: not rerun on resume


def test_integer_model_settings_are_checked_by_name(make_cfg):
    with pytest.raises(ConfigError, match=r"model.hidden_channels must be an integer.*1.5"):
        resolve_run(make_cfg(*TINY, "model.hidden_channels=1.5"))
    with pytest.raises(ConfigError, match=r"model.num_layers must be an integer.*True"):
        resolve_run(make_cfg(*TINY, "model.num_layers=true"))
    with pytest.raises(ConfigError, match=r"trainer.max_epochs must be a positive integer"):
        resolve_run(make_cfg("dataset=karate", "trainer.max_epochs=true"))


def test_a_bad_mirror_path_does_not_fail_a_dataset_that_needs_no_files(make_cfg, tmp_path):
    missing = tmp_path / "no_such_mirror"
    record = run_experiment(make_cfg(*TINY, f"paths.data_mirror={missing}"))
    assert record.status == "ok", record.reason
    cora = make_cfg("dataset=cora", "trainer.max_epochs=1", f"paths.data_mirror={missing}")
    cora.paths.data_dir = str(tmp_path / "fresh")  # nothing staged yet
    needs_files = run_experiment(cora)
    assert needs_files.status == "failed" and str(missing) in needs_files.reason
