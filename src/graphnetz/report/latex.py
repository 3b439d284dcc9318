"""LaTeX tables (booktabs): summary cells ``$mean_{\\pm h}$``, pairwise tests, mean ranks,
equivalence verdicts with Bayesian probabilities, and the robustness of the ranking.

Functions of the :class:`ReportAnalysis`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from graphnetz.atomic import write_text

from .analysis import ReportAnalysis
from .cells import interval_caveat, mark_best, num, pval

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\^{}",
    "[": "{[}",  # a row starting with [ would be read as the optional argument of \\
}


def escape(text: str) -> str:
    return "".join(_ESCAPES.get(c, c) for c in str(text))


def math_number(x: float, fmt: str = ".2f") -> str:
    """A statistic inside ``$...$``: ``\\infty`` for an infinite one."""
    if math.isinf(x):
        return r"\infty" if x > 0 else r"-\infty"
    return format(x, fmt)


def math_p(p: float) -> str:
    """A p-value inside ``$...$``: as :func:`pval`, with ``1.2\\times10^{-5}`` for the small
    ones (``1.2e-05`` would be typeset as a subtraction)."""
    text = "0" if p == 0 else pval(p)
    if "e" not in text:
        return r"\mathrm{n/a}" if text == "n/a" else text
    mantissa, exponent = text.split("e")
    return rf"{mantissa}\times10^{{{int(exponent)}}}"


#: Superscripts of a CI that :func:`interval_caveat` flags (explained in the caption).
_CAVEAT_MARKS = {"beyond": r"^{\dagger}", "zero": r"^{\ddagger}"}


def _cell(r: pd.Series) -> str:
    h = r"\mathrm{n/a}" if not math.isfinite(r["half_width"]) else num(r["half_width"])
    mean = num(r["mean"])
    body = rf"\mathbf{{{mean}}}" if r["best"] else mean
    mark = _CAVEAT_MARKS.get(interval_caveat(r) or "", "")
    cell = f"${body}_{{\\pm {h}}}{mark}$"
    return rf"\underline{{{cell}}}" if r["overlaps_best"] else cell


def summary_table(analysis: ReportAnalysis) -> str:
    s = mark_best(analysis.summary)
    st = analysis.settings
    tasks = list(dict.fromkeys(s["task"]))
    models = list(dict.fromkeys(s["model"]))
    up, down = r"$\uparrow$", r"$\downarrow$"
    arrows = {t: up if analysis.directions[t] == "max" else down for t in tasks}
    metrics = {t: s.loc[s["task"] == t, "metric"].iloc[0] for t in tasks}
    level = f"{100 * (1 - st.alpha):g}"
    kind = "Student-t" if st.ci == "t" else f"percentile bootstrap (B = {st.n_resamples})"
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{Mean over seeds with the " + level + r"\,\% " + kind + r" CI half-width "
        r"$\pm h$. Bold: best mean per task (by the metric's direction, $\uparrow$ higher is "
        r"better, $\downarrow$ lower is better). Underlined: CI overlaps the best model's CI. "
        r"n/a: CI undefined (a single seed). "
        + _caveat_note({interval_caveat(r) for r in s.to_dict("records")})
        + _split_note(metrics.values())
        + "}",
        r"\label{tab:summary}",
        r"\begin{tabular}{l" + "c" * len(tasks) + "}",
        r"\toprule",
        "Model & " + " & ".join(escape(t) for t in tasks) + r" \\",
        " & " + " & ".join(f"{escape(metrics[t])} {arrows[t]}" for t in tasks) + r" \\",
        r"\midrule",
    ]
    for m in models:
        cells = []
        for t in tasks:
            row = s[(s["task"] == t) & (s["model"] == m)]
            cells.append(_cell(row.iloc[0]) if len(row) else "--")
        lines.append(f"{escape(m)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _caveat_note(caveats: set[str | None]) -> str:
    """The caption's key to the marks of the cells present (see report.md's notes)."""
    notes = {
        "beyond": r"$^{\dagger}$: CI reaches past the metric's range (few seeds or a large "
        r"spread; the part outside is no possible value). ",
        "zero": r"$^{\ddagger}$: CI of zero width, every seed gave the same value (no "
        r"spread observed, not an exact mean). ",
    }
    return "".join(note for kind, note in notes.items() if kind in caveats)


def _split_note(metrics) -> str:
    """Which split the table's values come from (``val:accuracy`` is the validation split's)."""
    names = {"val": "validation", "train": "training", "test": "test"}
    prefixes = {m.split(":", 1)[0] if ":" in m else "test" for m in metrics}
    if not prefixes <= set(names):  # cost:wall_time_s and the like: no split
        return ""
    splits = sorted(prefixes)
    named = " and ".join(names[x] for x in splits)
    return f"Values from the {escape(named)} split{'s' if len(splits) > 1 else ''}."


def pairwise_table(analysis: ReportAnalysis) -> str:
    pw = analysis.pairwise
    st = analysis.settings
    method = "paired t" if st.pairwise_method == "t" else "Wilcoxon signed-rank"
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{Pairwise comparisons within each task on seed-aligned differences "
        r"$\Delta\mu = \bar{x}_A - \bar{x}_B$. Both p-values are Holm-adjusted across the "
        r"pairs of the task. $^{*}$: significant at $\alpha = "
        + f"{st.alpha:g}"
        + r"$ by the "
        + method
        + r" test (the active method). Agree: both tests reach the same decision.}",
        r"\label{tab:pairwise}",
        r"\begin{tabular}{lllrrrrl}",
        r"\toprule",
        r"Task & A & B & $n$ & $\Delta\mu$ & $p_t$ (Holm) & $p_W$ (Holm) & Agree \\",
    ]
    active = "t_p_holm" if st.pairwise_method == "t" else "w_p_holm"
    for task in dict.fromkeys(pw["task"]):
        lines.append(r"\midrule")
        for r in pw[pw["task"] == task].to_dict("records"):
            ps = {}
            for col in ("t_p_holm", "w_p_holm"):
                ps[col] = pval(r[col]) + ("$^{*}$" if col == active and r["significant"] else "")
            agree = "n/a" if pd.isna(r["agree"]) else ("yes" if r["agree"] else "no")
            lines.append(
                f"{escape(task)} & {escape(r['model_a'])} & {escape(r['model_b'])} & "
                f"{r['n_common']} & {num(r['mean_diff'])} & {ps['t_p_holm']} & "
                f"{ps['w_p_holm']} & {agree} \\\\"
            )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def ranks_table(analysis: ReportAnalysis) -> str | None:
    cd = analysis.critical_difference
    if not cd.applicable:
        return None
    f = cd.ranks.friedman
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Mean ranks over $N = {f.n_tasks}$ tasks (1 = best). Friedman "
        rf"$\chi^2_F = {math_number(f.statistic)}$, $p = {math_p(f.pvalue)}$; Iman--Davenport "
        rf"$F = {math_number(f.iman_davenport)}$, $p = {math_p(f.iman_davenport_pvalue)}$; "
        rf"Nemenyi $CD_{{{analysis.settings.alpha:g}}} = {math_number(cd.cd)}$."
        + _left_out(cd.ranks)
        + "}",
        r"\label{tab:ranks}",
        r"\begin{tabular}{lr}",
        r"\toprule",
        r"Model & Mean rank \\",
        r"\midrule",
    ]
    lines += [f"{escape(m)} & {v:.2f} \\\\" for m, v in cd.mean_ranks.items()]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def _left_out(ranks) -> str:
    """What the rank table does not cover: models or tasks dropped for absent cells."""
    parts = []
    if ranks.dropped_models:
        names = ", ".join(escape(m) for m in ranks.dropped_models)
        parts.append(f" Not ranked (absent on some task): {names}.")
    if ranks.dropped_tasks:
        names = ", ".join(escape(t) for t in ranks.dropped_tasks)
        parts.append(f" Tasks left out (some model absent): {names}.")
    return "".join(parts)


def _prob(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.3f}"


def equivalence_table(analysis: ReportAnalysis) -> str | None:
    """TOST verdict and Bayesian probabilities per pair within each task (with a margin)."""
    eq = analysis.equivalence
    margin = analysis.settings.equivalence_margin
    if margin is None or eq.empty:
        return None
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{Equivalence within the margin $m = " + f"{margin:g}" + r"$: paired TOST "
        r"(Holm-adjusted within each task) against the difference test, and the Bayesian "
        r"signed-rank test with ROPE $[-m, m]$ (Benavoli et al., 2017). Verdicts: different, "
        r"equivalent, different but trivial (significant and inside the margin), "
        r"undetermined.}",
        r"\label{tab:equivalence}",
        r"\begin{tabular}{lllrrrlrrr}",
        r"\toprule",
        r"Task & A & B & $\Delta\mu$ & $p_{\mathrm{TOST}}$ & $p_{\mathrm{diff}}$ & Verdict & "
        r"$P(A)$ & $P(\mathrm{ROPE})$ & $P(B)$ \\",
    ]
    for task in dict.fromkeys(eq["task"]):
        lines.append(r"\midrule")
        for r in eq[eq["task"] == task].to_dict("records"):
            lines.append(
                f"{escape(task)} & {escape(r['model_a'])} & {escape(r['model_b'])} & "
                f"{num(r['mean_diff'])} & {pval(r['tost_p_holm'])} & {pval(r['diff_p_holm'])} & "
                f"{r['verdict']} & {_prob(r['p_a_better'])} & {_prob(r['p_rope'])} & "
                f"{_prob(r['p_b_better'])} \\\\"
            )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def robustness_table(analysis: ReportAnalysis) -> str | None:
    """Rank probabilities and, per pair, verdict survival and tasks needed."""
    rob = analysis.robustness
    if not rob.applicable:
        return None
    probs = rob.rank_probabilities
    k = len(probs.columns)
    lines = [
        r"% requires \usepackage{booktabs}",
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{Robustness of the ranking: probability of each rank under $B = "
        rf"{rob.n_resamples}$ bootstrap resamples of the tasks (seed {rob.seed}).}}",
        r"\label{tab:rank-probabilities}",
        r"\begin{tabular}{l" + "r" * k + "}",
        r"\toprule",
        "Model & " + " & ".join(f"$P(r = {c})$" for c in probs.columns) + r" \\",
        r"\midrule",
    ]
    lines += [
        f"{escape(m)} & " + " & ".join(_prob(v) for v in row) + r" \\"
        for m, row in probs.iterrows()
    ]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    lines += [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{Per pair: mean-rank gap, Nemenyi verdict, share of bootstrap resamples "
        r"and of leave-one-task-out tables with the same verdict, and the number of tasks at "
        r"which Nemenyi's CD would reach the observed gap.}",
        r"\label{tab:rank-stability}",
        r"\begin{tabular}{llrlrrr}",
        r"\toprule",
        r"A & B & Gap & Nemenyi & Bootstrap & Leave-one-out & Tasks needed \\",
        r"\midrule",
    ]
    for r in rob.pairs.to_dict("records"):
        need = r"$\infty$" if math.isinf(r["tasks_needed"]) else str(int(r["tasks_needed"]))
        verdict = "separated" if r["separated"] else "not separated"
        lines.append(
            f"{escape(r['model_a'])} & {escape(r['model_b'])} & {r['gap']:.2f} & {verdict} & "
            f"{_prob(r['bootstrap_agreement'])} & {_prob(r['loo_agreement'])} & {need} \\\\"
        )
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def write_tables(analysis: ReportAnalysis, directory: str | Path) -> list[Path]:
    """Write summary.tex, pairwise.tex and, when they apply, ranks.tex, equivalence.tex
    (a margin was given) and robustness.tex."""
    directory = Path(directory)
    paths = [
        write_text(directory / "summary.tex", summary_table(analysis)),
        write_text(directory / "pairwise.tex", pairwise_table(analysis)),
    ]
    optional = {
        "ranks": ranks_table(analysis),
        "equivalence": equivalence_table(analysis),
        "robustness": robustness_table(analysis),
    }
    for name, text in optional.items():
        if text is not None:
            paths.append(write_text(directory / f"{name}.tex", text))
    return paths
