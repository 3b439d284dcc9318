"""Content-addressed sweeps as users run them: ``train.py -m`` in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY = ("dataset=karate", "trainer.max_epochs=2")


def train(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "train.py", *args], cwd=REPO, capture_output=True, text=True, timeout=900
    )


def launch(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "train.py", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def texts(sweep: Path) -> dict[str, str]:
    """Run directory name -> its result.json text."""
    return {p.parent.name: p.read_text() for p in sweep.rglob("result.json")}


def test_an_extended_sweep_runs_only_the_new_seeds(tmp_path, data_dir):
    sweep = tmp_path / "s"
    common = ("-m", "model=gcn,mlp", *TINY, "resume=true", f"hydra.sweep.dir={sweep}")
    first = train(*common, "seed=range(2)", f"paths.data_dir={data_dir}")
    assert first.returncode == 0, first.stderr[-3000:]
    before = texts(sweep)
    assert len(before) == 4
    second = train(*common, "seed=range(3)", f"paths.data_dir={data_dir}")
    assert second.returncode == 0, second.stderr[-3000:]
    after = texts(sweep)
    assert len(after) == 6 and all(after[name] == text for name, text in before.items())
    log = second.stdout + second.stderr
    assert log.count("resumed: record already complete") == 4


def test_no_setting_overwrites_the_record_of_another(tmp_path, data_dir):
    """``task.lr=0.01,0.05`` then ``task.lr=0.2``, then ``task=link_pred``, into one folder
    with resume=true: every record stays."""
    sweep = tmp_path / "s"
    common = (*TINY, "resume=true", f"hydra.sweep.dir={sweep}", f"paths.data_dir={data_dir}")
    for overrides in (["task.lr=0.01,0.05"], ["task.lr=0.2"], ["task=link_pred"]):
        proc = train("-m", *overrides, *common)
        assert proc.returncode == 0, proc.stderr[-3000:]
    found = [json.loads(t) for t in texts(sweep).values()]
    assert sorted((r["task"], r["config"]["task"]["lr"]) for r in found) == [
        ("karate/link_pred", 0.01),
        ("karate/node_cls", 0.01),
        ("karate/node_cls", 0.05),
        ("karate/node_cls", 0.2),
    ]
    assert len({r["identity"] for r in found}) == 4 and {r["status"] for r in found} == {"ok"}


def test_sweeps_started_together_get_folders_of_their_own(tmp_path, data_dir):
    args = ("-m", "seed=0,1", *TINY, f"paths.output_dir={tmp_path}", f"paths.data_dir={data_dir}")
    procs = [launch(*args), launch(*args)]
    for proc in procs:
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err[-3000:]
    sweeps = [p for p in (tmp_path / "multirun").glob("*/*") if p.is_dir()]
    assert len(sweeps) == 2
    assert [len(texts(s)) for s in sweeps] == [2, 2]


def test_a_single_run_that_fails_exits_non_zero(tmp_path, data_dir):
    proc = train(
        *TINY, "model.num_layers=0", f"paths.output_dir={tmp_path}", f"paths.data_dir={data_dir}"
    )
    assert proc.returncode == 1
    (found,) = texts(tmp_path / "runs").values()
    assert json.loads(found)["status"] == "failed"
