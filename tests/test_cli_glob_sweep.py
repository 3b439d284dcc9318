"""A sweep over a glob of a config group (``model='glob(gc*)'``): counted by the sweep's
progress, and inspected by ``python -m graphnetz status``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hydra import initialize_config_dir
from omegaconf import OmegaConf

from graphnetz.__main__ import main
from graphnetz.config_dir import CONF_DIR
from graphnetz.sweep.callbacks import EVENTS_ENV, TOKEN_ENV, SweepCallback

REPO = Path(__file__).resolve().parents[1]
GC_MODELS = sorted(p.stem for p in (CONF_DIR / "model").glob("gc*.yaml"))
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


def test_the_progress_total_counts_each_option_of_a_glob(tmp_path, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "")  # restored after the test: the callback sets both
    monkeypatch.setenv(EVENTS_ENV, "")
    config = OmegaConf.create(
        {
            "hydra": {
                "sweep": {"dir": str(tmp_path)},
                "overrides": {"task": ["model=glob(gc*)", "seed=0,1"]},
                "sweeper": {"_target_": BASIC_SWEEPER},
            }
        }
    )
    callback = SweepCallback(poll_s=3600)
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):  # as in a launch
        callback.on_multirun_start(config)
    callback._stop.set()
    callback._thread.join()
    assert len(GC_MODELS) >= 2 and callback.total == 2 * len(GC_MODELS)


def test_a_glob_sweep_shows_its_progress_and_status_reads_it(tmp_path, capsys):
    sweep = tmp_path / "glob"
    done = subprocess.run(
        [sys.executable, "train.py", "-m", "model=glob(gc*)", "dataset=karate", "seed=0"]
        + ["trainer.max_epochs=2", "num_threads=1", f"hydra.sweep.dir={sweep}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ConfigLoader is not set" not in done.stderr
    n = len(GC_MODELS)
    assert f"sweep summary: ok {n}, failed 0" in done.stderr
    assert main(["status", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert f"{n} runs, {n} already done, 0 to run" in out
