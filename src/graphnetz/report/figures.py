"""Figures of the report (matplotlib, Agg): CD diagram, per-task CI charts, dashboard,
pairwise significance heatmaps, seed advisor, Bayesian posterior bars. Each is saved as
PNG and PDF.

Drawn from the :class:`ReportAnalysis` (``write_figures``) or its parts.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from graphnetz import stats  # noqa: E402
from graphnetz.atomic import save_figure, tight_bbox  # noqa: E402

from .analysis import CriticalDifference, ReportAnalysis  # noqa: E402
from .cells import mark_best, pval, task_slugs  # noqa: E402

STYLE = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "figure.dpi": 100}
FORMATS = ("png", "pdf")
BEST_COLOR, OTHER_COLOR, OVERLAP_COLOR = "#1f4e99", "#7f7f7f", "#6a9fd8"


class PlainLogFormatter(matplotlib.ticker.LogFormatter):
    """Log-axis tick labels as plain numbers (0.01, 1, 100), on the ticks matplotlib's own
    log formatter labels. Its default writes mathtext (``$\\mathdefault{10^{0}}$``), which
    the figures print literally: they are drawn with ``text.parse_math`` off."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        return f"{x:g}" if super().__call__(x, pos) else ""


def _save(fig, directory: Path, name: str) -> list[Path]:
    box = tight_bbox(fig)
    paths = [save_figure(fig, directory / f"{name}.{ext}", box) for ext in FORMATS]
    plt.close(fig)
    return paths


def cd_diagram(cd: CriticalDifference) -> plt.Figure:
    """Demšar-style diagram: rank axis (1 = best, left), CD bar, clique bars, labelled models."""
    r = cd.mean_ranks
    names, ranks = list(r.index), r.to_numpy()
    k = len(names)
    half = (k + 1) // 2
    rows = max(half, k - half)
    clique_top, clique_step, line_h = 0.3, 0.17, 0.3
    label_top = clique_top + len(cd.cliques) * clique_step + 0.2
    bottom = label_top + (rows - 1) * line_h + 0.25
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7.0, 1.3 + 0.55 * bottom))
        ax.set_xlim(0.6, k + 0.4)
        ax.set_ylim(bottom, -1.05)
        ax.axis("off")
        ax.plot([1, k], [0, 0], color="black", lw=1.2)
        for tick in np.arange(1, k + 0.01, 0.5):
            major = float(tick).is_integer()
            ax.plot([tick, tick], [0, -0.1 if major else -0.05], color="black", lw=1)
            if major:
                ax.text(tick, -0.15, f"{int(tick)}", ha="center", va="bottom")
        ax.text(
            (1 + k) / 2, -0.45, "mean rank (1 = best; lower = better)", ha="center", va="bottom"
        )
        # critical-difference bar, starting at rank 1
        ax.plot([1, 1 + cd.cd], [-0.8, -0.8], color="black", lw=2)
        for end in (1, 1 + cd.cd):
            ax.plot([end, end], [-0.86, -0.74], color="black", lw=1)
        ax.text(1 + cd.cd / 2, -0.88, f"CD = {cd.cd:.2f}", ha="center", va="bottom")
        for i, clique in enumerate(cd.cliques):  # one row per clique: bars never overlap
            cr = r[list(clique)]
            y = clique_top + i * clique_step
            ax.plot(
                [cr.min() - 0.04, cr.max() + 0.04],
                [y, y],
                color="#d62728",
                lw=3.5,
                solid_capstyle="round",
            )
        for i in range(k):
            left = i < half
            row = i if left else k - 1 - i
            y = label_top + row * line_h
            x_end = 0.95 if left else k + 0.05
            ax.plot([ranks[i], ranks[i], x_end], [0, y, y], color="black", lw=0.9)
            ax.text(
                x_end + (-0.05 if left else 0.05),
                y,
                f"{names[i]} ({ranks[i]:.2f})",
                ha="right" if left else "left",
                va="center",
            )
        f = cd.ranks.friedman
        ax.set_title(
            f"Friedman χ² = {f.statistic:.2f}, p = {pval(f.pvalue)} "
            f"(N = {f.n_tasks} tasks, k = {k} models, α = {cd.ranks.alpha:g})",
            pad=4,
        )
    return fig


def _task_panel(ax, rows: pd.DataFrame, title: str) -> None:
    """Mean with CI whiskers per model; best dark, CI overlapping the best lighter."""
    rows = rows.iloc[::-1]  # first model on top
    y = np.arange(len(rows))
    for yi, (_, r) in zip(y, rows.iterrows(), strict=True):
        color = BEST_COLOR if r["best"] else OVERLAP_COLOR if r["overlaps_best"] else OTHER_COLOR
        if math.isfinite(r["half_width"]):
            ax.errorbar(
                r["mean"],
                yi,
                xerr=[[r["mean"] - r["low"]], [r["high"] - r["mean"]]],
                fmt="o",
                color=color,
                capsize=3,
                lw=1.5,
                ms=5,
            )
        else:
            ax.plot(r["mean"], yi, "o", mfc="white", color=color, ms=5)
            ax.annotate(
                "CI n/a",
                (r["mean"], yi),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
    ax.set_yticks(y, [f"{m} (n={n})" for m, n in zip(rows["model"], rows["n"], strict=True)])
    arrow = "higher" if rows["direction"].iloc[0] == "max" else "lower"
    ax.set_xlabel(f"{rows['metric'].iloc[0]} ({arrow} = better)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.margins(y=0.15)


def task_chart(rows: pd.DataFrame, ci_label: str) -> plt.Figure:
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.5, 0.9 + 0.4 * len(rows)))
        _task_panel(ax, rows, f"{rows['task'].iloc[0]} — mean ± {ci_label}")
    return fig


def dashboard(summary: pd.DataFrame, ci_label: str) -> plt.Figure:
    tasks = list(dict.fromkeys(summary["task"]))
    ncols = min(3, len(tasks))
    nrows = math.ceil(len(tasks) / ncols)
    per = summary.groupby("task", sort=False).size().max()
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(
            nrows, ncols, figsize=(3.6 * ncols, (0.9 + 0.35 * per) * nrows), squeeze=False
        )
        for ax, task in zip(axes.flat, tasks, strict=False):
            _task_panel(ax, summary[summary["task"] == task], task)
        for ax in list(axes.flat)[len(tasks) :]:
            ax.axis("off")
        fig.suptitle(f"All tasks: mean ± {ci_label} (dark = best, light = CI overlaps best)")
        fig.tight_layout()
    return fig


def pairwise_heatmap(pw: pd.DataFrame, models: list[str], alpha: float) -> plt.Figure:
    """Holm-adjusted p of the active method for every pair; * marks p ≤ α."""
    method = pw["method"].iloc[0]
    col = "t_p_holm" if method == "t" else "w_p_holm"
    idx = {m: i for i, m in enumerate(models)}
    k = len(models)
    mat = np.full((k, k), np.nan)
    for r in pw.itertuples(index=False):
        i, j = idx[r.model_a], idx[r.model_b]
        mat[i, j] = mat[j, i] = getattr(r, col)
    with plt.rc_context(STYLE):
        size = 1.6 + 0.6 * k
        fig, ax = plt.subplots(figsize=(size + 1.0, size))
        cmap = plt.get_cmap("Blues_r").with_extremes(bad="#eeeeee")
        im = ax.imshow(np.ma.masked_invalid(mat), cmap=cmap, vmin=0, vmax=1)
        for i in range(k):
            for j in range(k):
                if i == j:
                    continue
                p = mat[i, j]
                txt = "n/a" if not math.isfinite(p) else pval(p) + ("*" if p <= alpha else "")
                ax.text(
                    j,
                    i,
                    txt,
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if math.isfinite(p) and p < 0.35 else "black",
                )
        ax.set_xticks(range(k), models, rotation=30, ha="right")
        ax.set_yticks(range(k), models)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="Holm-adjusted p")
        ax.set_title(
            f"{pw['task'].iloc[0]}: {'paired t' if method == 't' else 'Wilcoxon'} (* p ≤ {alpha:g})"
        )
    return fig


def seed_advisor(pw: pd.DataFrame, alpha: float, power: float = 0.8) -> plt.Figure | None:
    """Minimal detectable difference vs number of seeds, per task (pooled pair variance)."""
    curves = []
    for task, g in pw.groupby("task", sort=False):
        sd = g["diff_std"][np.isfinite(g["diff_std"]) & (g["diff_std"] > 0)]
        if len(sd):
            curves.append((task, float(np.sqrt(np.mean(sd**2))), int(g["n_common"].max())))
    if not curves:
        return None
    s_max = max(20, 2 * max(c[2] for c in curves))
    seeds = np.arange(2, s_max + 1)
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(5.5, 3.5))
        for task, sd, current in curves:
            mdd = [stats.min_detectable_difference(sd, s, power, alpha) for s in seeds]
            (line,) = ax.plot(seeds, mdd, label=f"{task} (σ_d ≈ {sd:.3g})")
            ax.plot(
                current,
                stats.min_detectable_difference(sd, max(current, 2), power, alpha),
                "o",
                color=line.get_color(),
            )
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PlainLogFormatter())
        ax.yaxis.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("number of seeds S")
        ax.set_ylabel("minimal detectable difference")
        ax.set_title(f"Seed advisor: paired t, power {power:g}, α = {alpha:g} (● = now)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return fig


def posterior_bars(rows: pd.DataFrame, title: str) -> plt.Figure:
    """One stacked bar per pair: P(A better), P(practically equivalent), P(B better)."""
    rows = rows.iloc[::-1]  # first pair on top
    y = np.arange(len(rows))
    parts = (
        ("p_a_better", "A better", BEST_COLOR),
        ("p_rope", "inside ROPE", "#bbbbbb"),
        ("p_b_better", "B better", "#d9822b"),
    )
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(7.0, 1.2 + 0.4 * len(rows)))
        left = np.zeros(len(rows))
        for col, label, color in parts:
            values = rows[col].fillna(0.0).to_numpy()
            ax.barh(y, values, left=left, color=color, label=label, height=0.6)
            for yi, v, x0 in zip(y, values, left, strict=True):
                if v >= 0.08:
                    ink = "white" if color == BEST_COLOR else "black"
                    ax.text(
                        x0 + v / 2, yi, f"{v:.2f}", ha="center", va="center", fontsize=7, color=ink
                    )
            left += values
        ax.set_yticks(
            y, [f"{a} vs {b}" for a, b in zip(rows["model_a"], rows["model_b"], strict=True)]
        )
        ax.set_xlim(0, 1)
        ax.set_xlabel("posterior probability (Bayesian signed-rank test)")
        ax.set_title(title)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        fig.tight_layout()
    return fig


def write_figures(analysis: ReportAnalysis, directory: str | Path) -> list[Path]:
    """Draw every figure into ``directory``; returns the written paths.

    Names are drawn as written: ``$`` in a task or model name is not read as mathtext
    (which would fail on an unknown symbol or typeset the name differently from the tables).
    """
    with plt.rc_context({"text.parse_math": False}):  # also for tick labels made at save time
        return _write_figures(analysis, Path(directory))


def _write_figures(analysis: ReportAnalysis, directory: Path) -> list[Path]:
    summary = mark_best(analysis.summary)
    if summary.empty:
        return []
    slugs = task_slugs(analysis.tasks)
    alpha, ci = analysis.settings.alpha, analysis.settings.ci
    ci_label = f"{100 * (1 - alpha):g}% {'t' if ci == 't' else 'bootstrap'} CI"
    paths: list[Path] = []
    for task in dict.fromkeys(summary["task"]):
        paths += _save(
            task_chart(summary[summary["task"] == task], ci_label), directory, f"task_{slugs[task]}"
        )
    paths += _save(dashboard(summary, ci_label), directory, "dashboard")
    pw = analysis.pairwise
    for task in dict.fromkeys(pw["task"]):
        models = list(summary.loc[summary["task"] == task, "model"])
        paths += _save(
            pairwise_heatmap(pw[pw["task"] == task], models, alpha),
            directory,
            f"pairwise_{slugs[task]}",
        )
    cd = analysis.critical_difference
    if cd.applicable:
        paths += _save(cd_diagram(cd), directory, "cd_diagram")
    fig = seed_advisor(pw, alpha)
    if fig is not None:
        paths += _save(fig, directory, "seed_advisor")
    margin = analysis.settings.equivalence_margin
    eq = analysis.equivalence
    for task in dict.fromkeys(eq["task"]) if not eq.empty else ():
        rows = eq[(eq["task"] == task) & eq["p_rope"].notna()]
        if len(rows):
            title = f"{task}: posterior, ROPE ±{margin:g}"
            paths += _save(posterior_bars(rows, title), directory, f"bayes_{slugs[task]}")
    if not analysis.bayes_across.empty:
        title = f"Across tasks (per-task means): posterior, ROPE ±{margin:g}"
        paths += _save(
            posterior_bars(analysis.bayes_across, title), directory, "bayes_across_tasks"
        )
    return paths
