"""The README's main job, timed from the command to the report:

    python train.py -m model=gcn,gat,sage,gt,mlp dataset=karate seed='range(10)' \\
        hydra.sweep.dir=DIR && python analyze.py DIR

Prints the wall time of the sweep and of the report, and how many lines of each one's
output (stdout and stderr) warn: a logger's ``WARNING`` and Python's ``UserWarning: ...``
alike, any case (the source line Python prints under a warning is not counted again);
each distinct warning line is printed once, with its count. ``--compare-src DIR`` runs
the same job with another checkout (its ``src``, with its ``train.py``, ``analyze.py``
and ``conf`` beside it; e.g. ``../main/src``) in the same script, alternating
``--repeats`` times, and prints the ratio of medians. ``--seeds 2`` gives a quick
version (10 runs). Target: <= 15 s.

    python benchmarks/karate_job.py [--seeds 10] [--repeats 1] [--compare-src ../main/src]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A warning line: "WARNING", "UserWarning:", "[warning]"; not "warnings.warn(" (the
#: source line Python prints under its warning line).
WARNING = re.compile(r"warning\b", re.IGNORECASE)


def warning_lines(log: str) -> list[str]:
    """The lines of ``log`` that warn."""
    return [line for line in log.splitlines() if WARNING.search(line)]


def job(src: str, seeds: int) -> tuple[float, float, list[str], list[str]]:
    """(sweep seconds, report seconds, the sweep's and the report's warning lines) of one
    job of the tree whose package sources are ``src`` (its ``train.py`` and
    ``analyze.py`` beside them)."""
    root = Path(src).parent
    sweep_dir = Path(tempfile.mkdtemp(prefix="karate-job-")) / "k"
    env = dict(os.environ, PYTHONPATH=src)
    train = [sys.executable, str(root / "train.py"), "-m", "model=gcn,gat,sage,gt,mlp"]
    train += ["dataset=karate", f"seed=range({seeds})", f"hydra.sweep.dir={sweep_dir}"]
    train += [f"paths.output_dir={sweep_dir.parent}/out"]
    start = time.perf_counter()
    out = subprocess.run(train, env=env, capture_output=True, text=True, check=False, cwd=root)
    middle = time.perf_counter()
    if out.returncode:
        raise SystemExit(f"sweep failed ({src}):\n{out.stderr[-3000:]}")
    report = subprocess.run(
        [sys.executable, str(root / "analyze.py"), str(sweep_dir)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
    )
    end = time.perf_counter()
    if report.returncode:
        raise SystemExit(f"analyze failed ({src}):\n{report.stderr[-3000:]}")
    return (
        middle - start,
        end - middle,
        warning_lines(out.stdout + out.stderr),
        warning_lines(report.stdout + report.stderr),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--compare-src", default=None, help="another tree's src/ to time")
    args = parser.parse_args()
    sides = {"ours": str(ROOT / "src")}
    if args.compare_src:
        sides["theirs"] = str(Path(args.compare_src).resolve())
    totals: dict[str, list[float]] = {side: [] for side in sides}
    for r in range(args.repeats):
        for side, src in sides.items():
            sweep_s, report_s, sweep_warns, report_warns = job(src, args.seeds)
            totals[side].append(sweep_s + report_s)
            print(
                f"  repeat {r + 1}/{args.repeats} {side:6s} sweep {sweep_s:6.1f} s + "
                f"report {report_s:5.1f} s = {sweep_s + report_s:6.1f} s; warning lines: "
                f"{len(sweep_warns)} in the sweep, {len(report_warns)} in the report",
                flush=True,
            )
            for where, lines in (("sweep", sweep_warns), ("report", report_warns)):
                for line, count in Counter(lines).items():
                    print(f"    {where} {count:3d}x {line.strip()[:300]}")
    medians = {side: statistics.median(values) for side, values in totals.items()}
    runs = 5 * args.seeds
    for side, value in medians.items():
        print(f"{side}: {value:.1f} s for {runs} runs + report (target <= 15 s at 50 runs)")
    if "theirs" in medians:
        print(f"ratio theirs / ours: {medians['theirs'] / medians['ours']:.2f}x")


if __name__ == "__main__":
    main()
