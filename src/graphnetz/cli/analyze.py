"""``analyze.py``: gather run records (or a CSV) and write the statistical report.

python analyze.py outputs/multirun/2024-01-01/12-00-00 [MORE_DIRS ...]
python analyze.py --from-csv results.csv --out report/
python analyze.py SWEEP --equivalence-margin 0.01 --cliques wilcoxon-holm
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from graphnetz.cli.legacy_facts import complete_dataset_facts
from graphnetz.cli.quick_exit import exit_after
from graphnetz.report import (
    CI_METHODS,
    CLIQUE_METHODS,
    MISSING_RULES,
    PAIRWISE_METHODS,
    BenchmarkReport,
)
from graphnetz.report.cells import num
from graphnetz.report.markdown_robustness import count, prob
from graphnetz.report.writer import holds_report, results_csv


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"invalid alpha {text!r}: must be a number in (0, 1)")
    return value


def _margin(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(
            f"invalid margin {text!r}: must be a positive number in the metric's units"
        )
    return value


def _seed(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: must be an integer >= 0")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"invalid count {text!r}: must be a positive integer")
    return int(text)


#: unreadable records named on the console (report.md lists them all)
SHOWN_UNREADABLE = 10


def run_counts(report: BenchmarkReport) -> str:
    """``runs: 12 analysed, 1 failed, 2 diverged, ...``: every run read and what became of
    it (the report's "Runs not analysed" names each one)."""
    kinds = [e.get("status", "failed") for e in report.failed]
    counts = {
        "ok": len(report.selected()[["task", "model", "seed"]].drop_duplicates()),
        "failed": kinds.count("failed"),
        "diverged": kinds.count("diverged"),
        "skipped": len(report.skipped),
        "unreadable": len(report.unreadable),
        "conflicting duplicates": kinds.count("conflicting"),
        "duplicates collapsed": report.provenance.get("collapsed_duplicates", 0),
    }
    superseded = len(report.provenance.get("superseded_reruns", ()))
    if superseded:
        counts["reruns not counted"] = superseded
    return "runs: " + ", ".join(f"{n} {what}" for what, n in counts.items())


def csv_report_folder(csv: Path, report: BenchmarkReport) -> Path:
    """Where ``--from-csv`` writes without ``--out``: ``CSV_FOLDER/report``; but when the
    CSV is the results.csv of the report in its folder (``SWEEP/report/results.csv``), that
    folder, so the report is rewritten where it was, not in ``SWEEP/report/report``. Its
    results.csv is then rewritten too: if that would change the CSV read (rows the reading
    left out, another order), ``SWEEP/report-from-csv`` instead, and the CSV stays as it
    is. Any other CSV in a report's folder also goes to ``SWEEP/report-from-csv``: the
    report there is not replaced by one of rows it was not written from."""
    folder = csv.resolve().parent
    if not holds_report(folder):
        return folder / "report"
    sibling = folder.with_name(f"{folder.name}-from-csv")
    own = folder / "results.csv"
    if own.resolve() != csv.resolve():
        why = f"{csv.name} is not the results.csv of the report there"
    elif own.read_text(encoding="utf-8") != results_csv(report.data, report.primary_metrics):
        why = f"rewriting {own.name} there would change the CSV read"
    else:
        return folder
    print(f"note: the report goes to {sibling}, not into {folder}: {why}", file=sys.stderr)
    return sibling


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
    p.add_argument(
        "--out",
        metavar="DIR",
        help="output folder (default: FIRST_DIR/report; with --from-csv, CSV_FOLDER/report, "
        "or the CSV's folder itself when the CSV is the results.csv of the GraphNetz report "
        "there; another CSV in a report's folder: REPORT_FOLDER-from-csv)",
    )
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
    p.add_argument(
        "--bootstrap-seed",
        type=_seed,
        default=0,
        help="seed of every resampling: bootstrap CI, rank stability, Bayesian posterior",
    )
    p.add_argument(
        "--equivalence-margin",
        type=_margin,
        default=None,
        metavar="M",
        help="smallest difference that matters, in the metric's units (e.g. 0.01 accuracy): "
        "adds TOST verdicts and the Bayesian comparison; no default, none suits every metric",
    )
    p.add_argument(
        "--cliques",
        choices=CLIQUE_METHODS,
        default="nemenyi",
        help="what joins models in the CD diagram: Nemenyi's CD (default) or Holm-adjusted "
        "Wilcoxon signed-rank tests on per-task means",
    )
    p.add_argument(
        "--missing",
        choices=MISSING_RULES,
        default="drop-models",
        help="rank table with absent cells: leave out models missing on some task (default) "
        "or tasks missing some model",
    )
    p.add_argument(
        "--rank-resamples",
        type=_positive,
        default=2_000,
        metavar="B",
        help="bootstrap resamples of the tasks for rank stability (default 2000)",
    )
    p.add_argument(
        "--posterior-samples",
        type=_positive,
        default=50_000,
        metavar="S",
        help="posterior draws of the Bayesian signed-rank test (default 50000)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if bool(args.dirs) == bool(args.from_csv):
        parser.error("give either one or more DIRs or --from-csv FILE (not both, not neither)")
    out: Path | None
    if args.out:
        out = Path(args.out)
    elif args.from_csv:  # decided once the CSV is read (csv_report_folder)
        out = None
    else:  # a record file given as DIR: the report goes beside it
        first = Path(args.dirs[0])
        out = (first.parent if first.is_file() else first) / "report"
    if out is not None and out.exists() and not out.is_dir():
        parser.error(f"--out {str(out)!r} is a file, not a folder")
    if args.from_csv and Path(args.from_csv).is_dir():
        parser.error(f"--from-csv {args.from_csv!r} is a folder; give it as DIR instead")
    settings = {
        "alpha": args.alpha,
        "ci": args.ci,
        "pairwise_method": args.pairwise,
        "bootstrap_seed": args.bootstrap_seed,
        "equivalence_margin": args.equivalence_margin,
        "cliques": args.cliques,
        "missing": args.missing,
        "n_task_resamples": args.rank_resamples,
        "n_posterior_samples": args.posterior_samples,
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
        for entry in report.unreadable[:SHOWN_UNREADABLE]:  # which, so they can be looked at
            print(f"unreadable: {entry.get('path')} ({entry.get('reason')})", file=sys.stderr)
        if len(report.unreadable) > SHOWN_UNREADABLE:
            more = len(report.unreadable) - SHOWN_UNREADABLE
            print(f"unreadable: ... and {more} more (report.md lists every one)", file=sys.stderr)
        if report.data.empty:
            print(
                f"error: no usable results found in {args.from_csv or ' '.join(args.dirs)} "
                f"({len(report.skipped)} skipped, {len(report.failed)} failed, "
                f"{len(report.unreadable)} unreadable)",
                file=sys.stderr,
            )
            return 1
        report.metric = args.metric
        if out is None:
            out = csv_report_folder(Path(args.from_csv), report)
            if out.exists() and not out.is_dir():
                raise ValueError(f"the report folder {str(out)!r} is a file; give --out")
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assert out is not None  # from --out, the DIRs, or the CSV read above
    with warnings.catch_warnings(record=True) as later:
        warnings.simplefilter("always")
        if args.dirs:  # records written before they carried dataset facts: measured here
            report.datasets = complete_dataset_facts(report.datasets)
        try:
            path = report.write(out)
        except OSError as exc:
            print(f"error: cannot write the report to {out}: {exc}", file=sys.stderr)
            return 1
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
    _print_closing_notes(report)
    print(f"\nreport: {path}")
    return 0


def _print_closing_notes(report: BenchmarkReport) -> None:
    """Each pair's verdict and posterior (with a margin) and the ranking's robustness."""
    analysis = report.analysis()
    eq = analysis.equivalence
    if not eq.empty:
        cols = ["task", "model_a", "model_b", "mean_diff", "tost_p_holm", "verdict"]
        shown = eq[cols + ["p_a_better", "p_rope", "p_b_better"]].copy()
        shown["mean_diff"] = shown["mean_diff"].map(num)
        for col in ("tost_p_holm", "p_a_better", "p_rope", "p_b_better"):
            shown[col] = shown[col].map(prob)
        print(f"\nequivalence (margin {analysis.settings.equivalence_margin:g}):")
        print(shown.to_string(index=False))
    rob = analysis.robustness
    if rob.applicable:
        pairs = rob.pairs.copy()
        for col in ("bootstrap_agreement", "loo_agreement"):
            pairs[col] = pairs[col].map(prob)
        pairs["gap"] = pairs["gap"].map(lambda g: f"{g:.2f}")
        pairs["tasks_needed"] = pairs["tasks_needed"].map(count)
        print(f"\nrank probabilities (bootstrap over tasks, B = {rob.n_resamples}):")
        print(rob.rank_probabilities.apply(lambda col: col.map(prob)).to_string())
        print("\nrank stability per pair:")
        print(pairs.to_string(index=False))


def cli() -> None:
    """``graphnetz-analyze``: :func:`main`, then the end of the process without teardown."""
    exit_after(main, sys.argv[0], status_from_result=True)


if __name__ == "__main__":
    exit_after(main, __file__, status_from_result=True)
