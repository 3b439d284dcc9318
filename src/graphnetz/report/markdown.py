"""Human-readable ``report.md``: a function of the :class:`ReportAnalysis`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

from .analysis import ReportAnalysis
from .cells import (
    FigureLinks,
    interval_caveat,
    mark_best,
    md_image,
    md_table,
    num,
    pval,
    task_slugs,
)
from .markdown_datasets import datasets_markdown
from .markdown_robustness import (
    equivalence_lines,
    missing_lines,
    pairing_lines,
    robustness_lines,
)
from .tuning import tuning_lines_of


def _seed_count(value: float) -> str | int:
    if pd.isna(value):
        return "n/a"
    return "> 100000" if math.isinf(value) else int(value)


#: How the summary marks a CI that :func:`interval_caveat` flags.
CAVEAT_MARKS = {"beyond": "†", "zero": "‡"}


def summary_lines(analysis: ReportAnalysis) -> list[str]:
    s = mark_best(analysis.summary)
    level = f"{100 * (1 - analysis.settings.alpha):g}%"
    rows = []
    flagged: dict[str, list[str]] = {kind: [] for kind in CAVEAT_MARKS}
    for r in s.to_dict("records"):
        mean = f"{num(r['mean'])} ± {num(r['half_width'])}"
        ci = "n/a" if not math.isfinite(r["low"]) else f"[{num(r['low'])}, {num(r['high'])}]"
        caveat = interval_caveat(r)
        if caveat:
            ci = f"{ci} {CAVEAT_MARKS[caveat]}"
            shown = f"[{num(r['low'])}, {num(r['high'])}]" if caveat == "beyond" else num(r["mean"])
            flagged[caveat].append(f"{r['model']} on {r['task']} {shown}")
        arrow = "↑" if r["direction"] == "max" else "↓"
        rows.append(
            [
                r["task"],
                f"{r['metric']} {arrow}",
                r["model"],
                r["n"],
                f"**{mean}**" if r["best"] else mean,
                ci,
            ]
        )
    lines = md_table(["task", "metric", "model", "n", "mean ± h", f"{level} CI"], rows)
    return lines + _caveat_lines(flagged, analysis.settings.ci)


def _caveat_lines(flagged: Mapping[str, list[str]], ci: str) -> list[str]:
    """One note per kind of CI that says less than it seems (the intervals stay as defined)."""
    lines = []
    if flagged["beyond"]:
        lines += [
            f"{CAVEAT_MARKS['beyond']} CI reaching past the metric's range ([0, 1] for "
            "accuracy, AP, AUC and other scores; ≥ 0 for errors): "
            + "; ".join(flagged["beyond"])
            + ". The interval is symmetric about the mean and knows nothing of the range: "
            "with few seeds or a large spread it reaches past it, and its part outside the "
            "range is no possible value. More seeds narrow it"
            + (
                ", and `--ci bootstrap` gives an interval inside the observed values."
                if ci == "t"
                else "."
            ),
            "",
        ]
    if flagged["zero"]:
        lines += [
            f"{CAVEAT_MARKS['zero']} CI of zero width: every seed gave the same value: "
            + "; ".join(flagged["zero"])
            + ". No spread was observed, which does not make the mean exact (a bold best "
            "or a missing overlap rests on it): with few seeds, or a small test set, equal "
            "values are likely; check that the seed changes the split or the "
            "initialisation, and add seeds.",
            "",
        ]
    return lines


def _runs(title: str, entries: Sequence[Mapping], key: str) -> list[str]:
    lines = [f"### {title} ({len(entries)})", ""]
    if not entries:
        return lines + ["None.", ""]
    for e in entries:
        who = "/".join(str(e.get(k)) for k in ("task", "model", "seed") if e.get(k) is not None)
        where = f" — `{e['path']}`" if e.get("path") else ""
        reason = str(e.get(key, "")).strip().splitlines()
        lines.append(f"- {who or 'run'}{where}: {reason[-1] if reason else 'no reason given'}")
    return lines + [""]


def _wilcoxon_floor(pw: pd.DataFrame, alpha: float) -> list[str]:
    """Say plainly when too few seeds make a significant Wilcoxon result impossible."""
    testable = pw[pw["n_common"] >= 2]
    if testable.empty:
        return []
    s, m = int(testable["n_common"].max()), len(testable)
    floor = min(1.0, m * 2.0 / 2**s)  # most extreme exact two-sided p, times Holm's m
    if floor <= alpha:
        return []
    return [
        f"With at most {s} common seeds and {m} pair(s), the smallest possible "
        f"Holm-adjusted Wilcoxon p is {pval(floor)} > α = {alpha:g}: no Wilcoxon "
        "comparison can be significant here; more seeds are needed.",
        "",
    ]


def cost_lines(analysis: ReportAnalysis) -> list[str]:
    """What each cell cost to run (wall time per run and per epoch), when records say."""
    cost = analysis.cost
    if cost.empty:
        return []
    total_h = cost["total_s"].sum() / 3600
    L = [
        "## Cost",
        "",
        f"Wall time of the analysed runs as recorded (each run's own processes; a run "
        f"resumed from a checkpoint counts every segment, not the work lost after its last "
        f"save): "
        f"{total_h:.2f} h in total over {int(cost['n'].sum())} runs. Seconds per epoch "
        "include the per-epoch evaluation of every split.",
        "",
    ]
    rows = [
        [
            r["task"],
            r["model"],
            r["n"],
            num(r["wall_s"], 1),
            num(r["epochs"], 0),
            num(r["s_per_epoch"], 3),
        ]
        for r in cost.to_dict("records")
    ]
    return L + md_table(["task", "model", "n", "s per run", "epochs run", "s per epoch"], rows)


def _header(a: ReportAnalysis) -> list[str]:
    st = a.settings
    ci_kind = (
        "Student-t"
        if st.ci == "t"
        else f"percentile bootstrap (B = {st.n_resamples}, seed {st.bootstrap_seed})"
    )
    metric = st.metric or "each task's primary metric (test split)"
    L = [
        "# GraphNetz statistical report",
        "",
        f"- metric: {metric}",
        f"- significance level α = {st.alpha:g}; CI: {100 * (1 - st.alpha):g}% {ci_kind}",
        f"- pairwise significance by the {_method_name(st.pairwise_method)} "
        "(Holm-adjusted within each task)",
        f"- tasks: {len(a.tasks)}, models: {len(a.models)}, analysed values: {a.n_values}",
        f"- source: {a.provenance.get('source', 'n/a')} "
        f"{' '.join(a.provenance.get('paths', []))}".rstrip(),
        "",
    ]
    L += tuning_lines_of(a.provenance.get("tuning"))
    if a.excluded_tasks:
        L += [
            f"Tasks without metric `{st.metric}` (not analysed): " + ", ".join(a.excluded_tasks),
            "",
        ]
    return L


def _method_name(method: str) -> str:
    return "paired t-test" if method == "t" else "Wilcoxon signed-rank test"


def _pair_cells(r: dict) -> list:
    agree = "n/a" if pd.isna(r["agree"]) else ("yes" if r["agree"] else "no")
    sig = (
        f"yes ({r['better']} better)"
        if r["significant"]
        else "n/a"
        if "untestable" in r["note"]
        else "no"
    )
    return [
        r["model_a"],
        r["model_b"],
        r["n_common"],
        num(r["mean_diff"]),
        pval(r["t_p_holm"]),
        pval(r["w_p_holm"]),
        agree,
        sig,
        r["note"],
    ]


def pairwise_lines(a: ReportAnalysis, figures: FigureLinks | str | None) -> list[str]:
    L = [
        "## Pairwise comparisons within each task",
        "",
        "Δμ = mean over common seeds of (A − B). p-values of both tests are Holm-adjusted "
        "across the pairs of the task; *significant* follows the "
        f"{_method_name(a.settings.pairwise_method)}; *agree* says "
        "whether both tests reach the same decision. Untestable pairs (fewer than 2 common "
        "seeds) are listed, not dropped.",
        "",
    ]
    pw = a.pairwise
    slugs = task_slugs(a.tasks)
    header = ["A", "B", "n", "Δμ (A−B)", "p_t (Holm)", "p_W (Holm)", "agree", "significant"]
    for task in a.tasks:
        L += [f"### {task}", ""]
        rows = [_pair_cells(r) for r in pw[pw["task"] == task].to_dict("records")]
        L += _wilcoxon_floor(pw[pw["task"] == task], a.settings.alpha)
        if rows:
            L += md_table([*header, "note"], rows)
        else:
            L += ["Only one model: nothing to compare.", ""]
        L += md_image(figures, f"task_{slugs[task]}", task)
        if rows:
            L += md_image(figures, f"pairwise_{slugs[task]}", f"{task} pairwise p")
    return L


def _iman_davenport(f) -> str:
    if math.isfinite(f.iman_davenport):
        return (
            f"- Iman–Davenport F = {f.iman_davenport:.3f} (dof {f.iman_davenport_dof[0]}, "
            f"{f.iman_davenport_dof[1]}), p = {pval(f.iman_davenport_pvalue)}"
        )
    return (
        "- Iman–Davenport F = ∞: every task ranks the models identically (χ²_F at its "
        "maximum N(k−1)), so F's denominator is 0 and its p-value is 0"
    )


def across_lines(a: ReportAnalysis, figures: FigureLinks | str | None) -> list[str]:
    L = ["## Across tasks: Friedman test and Nemenyi critical difference", ""]
    cd = a.critical_difference
    ranks = cd.ranks
    if ranks.dropped_models:
        L += [
            f"Models not present on every task, left out of the ranking: "
            f"{', '.join(ranks.dropped_models)}.",
            "",
        ]
    L += missing_lines(ranks)
    if not ranks.applicable:
        return L + [ranks.conclusion, ""]
    f = ranks.friedman
    L += md_table(["model", "mean rank"], [[m, f"{v:.2f}"] for m, v in cd.mean_ranks.items()])
    L += [
        f"- Friedman χ²_F = {f.statistic:.3f} (dof {f.dof}), p = {pval(f.pvalue)}",
        _iman_davenport(f),
        f"- Nemenyi CD (α = {a.settings.alpha:g}, q_α = {cd.q_alpha:.3f}, N = {f.n_tasks}, "
        f"k = {f.k}) = {cd.cd:.3f}",
        f"- {_clique_rule(cd.clique_method)}: "
        + ("; ".join("{" + ", ".join(c) + "}" for c in cd.cliques) or "none"),
        "",
        f"**{ranks.conclusion}**",
        "",
    ]
    L += md_image(figures, "cd_diagram", "critical difference diagram")
    bar_rule = (
        "differ by less than the critical difference CD and are not significantly "
        "different by Nemenyi"
        if cd.clique_method == "nemenyi"
        else "include no pair that the Holm-adjusted Wilcoxon signed-rank test on per-task "
        "means calls significantly different (the CD bar is still Nemenyi's)"
    )
    return L + [
        "How to read the CD diagram: models sit on the axis at their mean rank "
        f"(1 = best, on the left). Models joined by a red bar {bar_rule}.",
        "",
    ]


def _clique_rule(method: str) -> str:
    if method == "nemenyi":
        return "groups not separated by CD"
    return "groups with no significant pair (Wilcoxon signed-rank on per-task means, Holm)"


def advisor_lines(a: ReportAnalysis, figures: FigureLinks | str | None) -> list[str]:
    L = [
        "## Seed advisor",
        "",
        "From the pilot standard deviation σ_d of per-seed differences: *mdd* is the smallest "
        "true difference the paired t-test detects with power 0.8 at the current number of "
        "seeds; *seeds needed* is the number of seeds to detect the observed |Δμ| with power "
        "0.8 (optimistic: the observed difference is itself uncertain).",
        "",
    ]
    rows = [
        [
            r["task"],
            r["model_a"],
            r["model_b"],
            r["n_common"],
            num(r["diff_std"]),
            num(r["mdd"]),
            num(r["delta"]),
            _seed_count(r["seeds_needed"]),
        ]
        for r in a.power.to_dict("records")
    ]
    if rows:
        L += md_table(["task", "A", "B", "n", "σ_d", "mdd", "Δ targeted", "seeds needed"], rows)
    return L + md_image(figures, "seed_advisor", "seed advisor")


def runs_lines(a: ReportAnalysis) -> list[str]:
    L = ["## Runs not analysed", ""]
    L += _runs("Skipped", a.skipped, "reason")
    # diverged and conflicting runs travel with the failed ones, marked by their status
    kind = lambda e: e.get("status", "failed")  # noqa: E731
    L += _runs("Failed", [e for e in a.failed if kind(e) == "failed"], "error")
    for status, title in (("diverged", "Diverged"), ("conflicting", "Conflicting duplicates")):
        entries = [e for e in a.failed if kind(e) == status]
        if entries:
            L += _runs(title, entries, "error")
    L += _runs("Unreadable", a.unreadable, "reason")
    superseded = a.provenance.get("superseded_reruns") or []
    if superseded:
        L += _runs(
            "Reruns not counted (a worse record beside the run's counted one)",
            [{**e, "why": f"{e['status']} rerun beside the {e['by']} record"} for e in superseded],
            "why",
        )
    if a.n_duplicates:
        L += [f"Duplicate results ignored (first kept): {a.n_duplicates}", ""]
    versions = a.provenance.get("versions") or {}
    if versions:
        L += ["## Provenance", ""]
        L += [
            f"- {lib}: {', '.join(v) if isinstance(v, list) else v}" for lib, v in versions.items()
        ]
        L += [""]
    return L


def render(analysis: ReportAnalysis, figures: FigureLinks | str | None = None) -> str:
    """The whole report as Markdown; ``figures``: the figures drawn (:class:`FigureLinks`)
    or the relative folder of the PNGs (every figure linked), if any.

    The Datasets section, when the analysis has one, comes last.
    """
    L = _header(analysis)
    L += [
        "## Summary",
        "",
        "Mean over seeds ± CI half-width h; best mean per task in bold. "
        "n/a: a single seed, so the CI is undefined.",
        "",
    ]
    L += summary_lines(analysis)
    L += md_image(figures, "dashboard", "all tasks")
    L += pairwise_lines(analysis, figures)
    L += pairing_lines(analysis)
    L += equivalence_lines(analysis, figures)
    L += across_lines(analysis, figures)
    L += robustness_lines(analysis)
    L += cost_lines(analysis)
    L += advisor_lines(analysis, figures)
    L += runs_lines(analysis)
    text = "\n".join(L)
    if analysis.datasets.empty:
        return text
    return (
        text.rstrip("\n")
        + "\n\n"
        + datasets_markdown(analysis.datasets, metric=analysis.settings.metric)
    )
