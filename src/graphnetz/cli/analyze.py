"""``analyze.py``: gather run records (or a CSV) and write the statistical report.

python analyze.py outputs/multirun/2024-01-01/12-00-00 [MORE_DIRS ...]
python analyze.py --from-csv results.csv --out report/
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from graphnetz.cli.legacy_facts import complete_dataset_facts
from graphnetz.report import CI_METHODS, PAIRWISE_METHODS, BenchmarkReport
from graphnetz.report.cells import num


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"invalid alpha {text!r}: must be a number in (0, 1)")
    return value


def run_counts(report: BenchmarkReport) -> str:
    """``runs: 12 analysed, 1 failed, 2 diverged, ...``: every run read and what became of
    it (the report's "Runs not analysed" names each one)."""
    kinds = [e.get("status", "failed") for e in report.failed]
    counts = {
        "ok": len(report.data[["task", "model", "seed"]].drop_duplicates()),
        "failed": kinds.count("failed"),
        "diverged": kinds.count("diverged"),
        "skipped": len(report.skipped),
        "unreadable": len(report.unreadable),
        "conflicting duplicates": kinds.count("conflicting"),
        "duplicates collapsed": report.provenance.get("collapsed_duplicates", 0),
    }
    return "runs: " + ", ".join(f"{n} {what}" for what, n in counts.items())


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="analyze.py",
        description="Write the GraphNetz statistical report (report.md, report.json, "
        "results.csv, summary.csv, tables/, figures/) from run records or a CSV.",
    )
    p.add_argument(
        "dirs",
        nargs="*",
        metavar="DIR",
        help="sweep/run directories searched recursively for result.json",
    )
    p.add_argument(
        "--from-csv",
        metavar="FILE",
        help="long CSV task,model,seed,metric,value[,direction] instead of DIRs",
    )
    p.add_argument("--out", metavar="DIR", help="output folder (default: FIRST_DIR/report)")
    p.add_argument(
        "--metric",
        default=None,
        help="metric to analyse: 'accuracy' (test split) or 'val:accuracy'; "
        "default: each task's primary metric on the test split",
    )
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--ci", choices=CI_METHODS, default="t", help="confidence interval method")
    p.add_argument(
        "--pairwise",
        choices=PAIRWISE_METHODS,
        default="t",
        help="test that drives significance marks, LaTeX and figures",
    )
    p.add_argument("--bootstrap-seed", type=int, default=0, help="seed of the bootstrap CI")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if bool(args.dirs) == bool(args.from_csv):
        parser.error("give either one or more DIRs or --from-csv FILE (not both, not neither)")
    if args.from_csv and not args.out:
        args.out = str(Path(args.from_csv).resolve().parent / "report")
    out = Path(args.out) if args.out else Path(args.dirs[0]) / "report"
    settings = {
        "alpha": args.alpha,
        "ci": args.ci,
        "pairwise_method": args.pairwise,
        "bootstrap_seed": args.bootstrap_seed,
    }
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # printed below, not raw
            warnings.simplefilter("always")
            if args.from_csv:
                report = BenchmarkReport.from_csv(args.from_csv, **settings)
            else:
                report = BenchmarkReport.from_run_dirs(args.dirs, **settings)
        print(run_counts(report), file=sys.stderr)
        if report.data.empty:
            print(
                f"error: no usable results found in {args.from_csv or ' '.join(args.dirs)} "
                f"({len(report.skipped)} skipped, {len(report.failed)} failed, "
                f"{len(report.unreadable)} unreadable)",
                file=sys.stderr,
            )
            return 1
        report.metric = args.metric
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with warnings.catch_warnings(record=True) as later:
        warnings.simplefilter("always")
        if args.dirs:  # records written before they carried dataset facts: measured here
            report.datasets = complete_dataset_facts(report.datasets)
        path = report.write(out)
    # our own warnings (dropped models, duplicates), not libraries' deprecation notices
    ours = (
        w
        for w in [*caught, *later]
        if not issubclass(w.category, (DeprecationWarning, FutureWarning))
    )
    for msg in dict.fromkeys(str(w.message) for w in ours):
        print(f"warning: {msg}", file=sys.stderr)
    summary = report.summary()
    table = summary[["task", "model", "n", "mean", "half_width", "low", "high"]].copy()
    for col in ("mean", "half_width", "low", "high"):
        table[col] = table[col].map(num)
    print(table.rename(columns={"half_width": "±h"}).to_string(index=False))
    print(f"\nreport: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
