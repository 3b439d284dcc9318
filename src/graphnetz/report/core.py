"""``BenchmarkReport``: raw task × model × seed results and every statistic of SPEC §6."""

from __future__ import annotations

import itertools
import json
import warnings
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphnetz import stats
from graphnetz.atomic import write_text

from . import records as rec_io
from .analysis import CriticalDifference, RankAnalysis

SCHEMA_VERSION = 1
CI_METHODS = ("t", "bootstrap")
PAIRWISE_METHODS = ("t", "wilcoxon")


def _choice(name: str, value: Any, valid: tuple[str, ...]) -> str:
    if value not in valid:
        raise ValueError(f"{name}={value!r} is not valid; choose one of {list(valid)}")
    return value


class BenchmarkReport:
    """Statistical report over a long table of per-seed results.

    Settings (attributes, validated on assignment): ``metric`` (None = each task's primary
    test metric; ``"accuracy"`` = test accuracy; ``"val:accuracy"`` = another split),
    ``alpha``, ``ci`` ("t" | "bootstrap"), ``bootstrap_seed``, ``n_resamples`` and
    ``pairwise_method`` ("t" | "wilcoxon"), which drives significance marks, LaTeX and
    figures at once.
    """

    def __init__(
        self,
        data: pd.DataFrame,
        primary_metrics: Mapping[str, str] | None = None,
        *,
        provenance: Mapping[str, Any] | None = None,
        skipped: Iterable[Mapping[str, Any]] = (),
        failed: Iterable[Mapping[str, Any]] = (),
        unreadable: Iterable[Mapping[str, Any]] = (),
        metric: str | None = None,
        alpha: float = 0.05,
        ci: str = "t",
        bootstrap_seed: int = 0,
        n_resamples: int = 10_000,
        pairwise_method: str = "t",
    ) -> None:
        missing = [c for c in rec_io.COLUMNS if c not in data.columns]
        if missing:
            raise ValueError(f"data lacks column(s) {missing}; required {rec_io.COLUMNS}")
        data = data[rec_io.COLUMNS].copy()
        data["seed"] = data["seed"].astype(int)
        data["value"] = data["value"].astype(float)
        dup = data.duplicated(["task", "model", "seed", "metric"], keep="first")
        self.duplicates = data[dup].drop(columns=["value", "direction"]).to_dict("records")
        if self.duplicates:
            warnings.warn(
                f"{len(self.duplicates)} duplicate (task, model, seed, metric) result(s); "
                "the first occurrence is kept",
                stacklevel=2,
            )
        self.data = data[~dup].reset_index(drop=True)
        self.primary_metrics = dict(primary_metrics or {})
        for task, group in self.data.groupby("task", sort=False):
            self.primary_metrics.setdefault(task, group["metric"].iloc[0])
        self.provenance = dict(provenance or {})
        self.skipped = [dict(r) for r in skipped]
        self.failed = [dict(r) for r in failed]
        self.unreadable = [dict(r) for r in unreadable]
        self.metric = metric
        self.alpha = alpha
        self.ci = ci
        self.bootstrap_seed = int(bootstrap_seed)
        self.n_resamples = int(n_resamples)
        self.pairwise_method = pairwise_method

    # ------------------------------------------------------------------ settings
    @property
    def metric(self) -> str | None:
        return self._metric

    @metric.setter
    def metric(self, value: str | None) -> None:
        if value is not None:
            value = rec_io.metric_key(value)
            available = sorted(self.data["metric"].unique())
            if value not in available:
                raise ValueError(f"metric {value!r} is not in the results; available: {available}")
        self._metric = value

    @property
    def alpha(self) -> float:
        return self._alpha

    @alpha.setter
    def alpha(self, value: float) -> None:
        self._alpha = stats._validate.check_alpha(value)

    @property
    def ci(self) -> str:
        return self._ci

    @ci.setter
    def ci(self, value: str) -> None:
        self._ci = _choice("ci", value, CI_METHODS)

    @property
    def pairwise_method(self) -> str:
        return self._pairwise_method

    @pairwise_method.setter
    def pairwise_method(self, value: str) -> None:
        self._pairwise_method = _choice("pairwise_method", value, PAIRWISE_METHODS)

    def settings(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "alpha": self.alpha,
            "ci": self.ci,
            "bootstrap_seed": self.bootstrap_seed,
            "n_resamples": self.n_resamples,
            "pairwise_method": self.pairwise_method,
        }

    # -------------------------------------------------------------- constructors
    @classmethod
    def _from_collected(cls, acc: rec_io.Collected, provenance: dict, **settings: Any):
        provenance = {
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "versions": {k: sorted(v) for k, v in sorted(acc.versions.items())},
            **provenance,
        }
        return cls(
            acc.frame(),
            acc.primary_metrics,
            provenance=provenance,
            skipped=acc.skipped,
            failed=acc.failed,
            unreadable=acc.unreadable,
            **settings,
        )

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], **settings: Any) -> BenchmarkReport:
        """From run-record dicts (the ``result.json`` format of the training pipeline)."""
        return cls._from_collected(
            rec_io.collect_records(records), {"source": "records"}, **settings
        )

    @classmethod
    def from_run_dirs(cls, paths: Iterable[str | Path], **settings: Any) -> BenchmarkReport:
        """From every ``result.json`` found recursively under ``paths``."""
        paths = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
        acc = rec_io.collect_run_dirs(paths)
        return cls._from_collected(acc, {"source": "run_dirs", "paths": paths}, **settings)

    @classmethod
    def from_csv(cls, path: str | Path, **settings: Any) -> BenchmarkReport:
        """From a long CSV ``task,model,seed,metric,value[,direction]``."""
        acc = rec_io.collect_csv(path)
        return cls._from_collected(acc, {"source": "csv", "paths": [str(path)]}, **settings)

    @classmethod
    def from_json(cls, path: str | Path, **settings: Any) -> BenchmarkReport:
        """Reload a report written by :meth:`to_json` (raw values, provenance, settings)."""
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        version = doc.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"{path}: unsupported schema_version {version!r} (supported: {SCHEMA_VERSION})"
            )
        data = pd.DataFrame(doc["results"], columns=rec_io.COLUMNS)
        runs = doc.get("runs", {})
        return cls(
            data,
            doc.get("primary_metrics"),
            provenance=doc.get("provenance"),
            skipped=runs.get("skipped", ()),
            failed=runs.get("failed", ()),
            unreadable=runs.get("unreadable", ()),
            **{**doc.get("settings", {}), **settings},
        )

    # ------------------------------------------------------------------ values
    @property
    def tasks(self) -> list[str]:
        return list(dict.fromkeys(self.selected()["task"]))

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.selected()["model"]))

    def excluded_tasks(self) -> list[str]:
        """Tasks without the chosen ``metric`` (empty when using each task's primary metric)."""
        all_tasks = list(dict.fromkeys(self.data["task"]))
        kept = set(self.selected()["task"])
        return [t for t in all_tasks if t not in kept]

    def selected(self) -> pd.DataFrame:
        """The analysed values: one row per (task, model, seed) for the active metric."""
        if self.metric is None:
            want = self.data["task"].map(self.primary_metrics)
            mask = self.data["metric"] == want
        else:
            mask = self.data["metric"] == self.metric
        return self.data[mask].reset_index(drop=True)

    def direction(self, task: str) -> str:
        d = self.selected()
        return str(d.loc[d["task"] == task, "direction"].iloc[0])

    def _cells(self) -> Iterable[tuple[str, str, pd.DataFrame]]:
        sel = self.selected()
        for task in dict.fromkeys(sel["task"]):
            t = sel[sel["task"] == task]
            for model in dict.fromkeys(t["model"]):
                yield task, model, t[t["model"] == model].sort_values("seed")

    # --------------------------------------------------------------- summaries
    def summary(self, ci: str | None = None) -> pd.DataFrame:
        """Per (task, model): n, mean, std, CI half-width h, low, high (NaN when n = 1)."""
        ci = _choice("ci", ci or self.ci, CI_METHODS)
        rows = []
        for task, model, cell in self._cells():
            x = cell["value"].to_numpy()
            tci = stats.t_interval(x, self.alpha)
            if ci == "t":
                h, low, high = tci.half_width, tci.low, tci.high
            else:
                b = stats.bootstrap_interval(x, self.alpha, self.n_resamples, self.bootstrap_seed)
                h, low, high = b.half_width, b.low, b.high
            rows.append(
                {
                    "task": task,
                    "model": model,
                    "metric": cell["metric"].iloc[0],
                    "direction": cell["direction"].iloc[0],
                    "n": tci.n,
                    "mean": tci.mean,
                    "std": tci.std,
                    "half_width": h,
                    "low": low,
                    "high": high,
                    "ci": ci,
                }
            )
        return pd.DataFrame(
            rows,
            columns=[
                "task",
                "model",
                "metric",
                "direction",
                "n",
                "mean",
                "std",
                "half_width",
                "low",
                "high",
                "ci",
            ],
        )

    def pairwise(self, method: str | None = None) -> pd.DataFrame:
        """Every model pair within each task on seed-aligned differences d = A − B.

        Paired t and Wilcoxon p-values are Holm-adjusted across the pairs of the task;
        ``significant`` follows ``method`` (default: ``pairwise_method``); ``agree`` says
        whether both tests reach the same decision. Pairs with fewer than 2 common seeds
        are kept as untestable rows (p = NaN, not counted in Holm's m).
        """
        method = _choice("pairwise_method", method or self.pairwise_method, PAIRWISE_METHODS)
        sel = self.selected()
        out = []
        for task in dict.fromkeys(sel["task"]):
            t = sel[sel["task"] == task]
            wide = t.pivot(index="seed", columns="model", values="value")
            models = list(dict.fromkeys(t["model"]))
            direction = t["direction"].iloc[0]
            rows = []
            for a, b in itertools.combinations(models, 2):
                both = wide[[a, b]].dropna()
                row = {
                    "task": task,
                    "model_a": a,
                    "model_b": b,
                    "n_common": len(both),
                    "mean_diff": np.nan,
                    "diff_std": np.nan,
                    "t_statistic": np.nan,
                    "t_p": np.nan,
                    "w_statistic": np.nan,
                    "w_p": np.nan,
                    "note": "",
                }
                if len(both) < 2:
                    row["note"] = (
                        "untestable: no common seed"
                        if len(both) == 0
                        else "untestable: only 1 common seed"
                    )
                    if len(both) == 1:
                        row["mean_diff"] = float(both[a].iloc[0] - both[b].iloc[0])
                else:
                    xa, xb = both[a].to_numpy(), both[b].to_numpy()
                    tt, ww = stats.paired_t_test(xa, xb), stats.wilcoxon_test(xa, xb)
                    d = xa - xb
                    notes = [
                        n for n in (tt.note and f"t: {tt.note}", ww.note and f"W: {ww.note}") if n
                    ]
                    row.update(
                        mean_diff=float(d.mean()),
                        diff_std=float(d.std(ddof=1)),
                        t_statistic=tt.statistic,
                        t_p=tt.pvalue,
                        w_statistic=ww.statistic,
                        w_p=ww.pvalue,
                        note="; ".join(notes),
                    )
                rows.append(row)
            frame = pd.DataFrame(rows)
            if frame.empty:
                continue
            frame["t_p_holm"] = stats.holm_adjust(frame["t_p"].to_numpy())
            frame["w_p_holm"] = stats.holm_adjust(frame["w_p"].to_numpy())
            frame["direction"] = direction
            out.append(frame)
        cols = [
            "task",
            "model_a",
            "model_b",
            "n_common",
            "mean_diff",
            "diff_std",
            "t_statistic",
            "t_p",
            "t_p_holm",
            "w_statistic",
            "w_p",
            "w_p_holm",
            "agree",
            "significant",
            "better",
            "method",
            "note",
        ]
        if not out:
            return pd.DataFrame(columns=cols)
        df = pd.concat(out, ignore_index=True)
        t_sig, w_sig = df["t_p_holm"] <= self.alpha, df["w_p_holm"] <= self.alpha
        testable = df["t_p_holm"].notna() & df["w_p_holm"].notna()
        df["agree"] = pd.array(np.where(testable, t_sig == w_sig, None), dtype="boolean")
        active = df["t_p_holm"] if method == "t" else df["w_p_holm"]
        df["significant"] = active <= self.alpha  # NaN (untestable) compares False
        a_wins = np.where(df["direction"] == "max", df["mean_diff"] > 0, df["mean_diff"] < 0)
        df["better"] = np.where(
            df["significant"], np.where(a_wins, df["model_a"], df["model_b"]), ""
        )
        df["method"] = method
        return df[cols]

    # ------------------------------------------------------------ across tasks
    def friedman(self) -> RankAnalysis:
        """Rank table over tasks (models present on every task only) and the Friedman test."""
        sel = self.selected()
        tasks = list(dict.fromkeys(sel["task"]))
        models = list(dict.fromkeys(sel["model"]))
        present = sel.groupby("task")["model"].apply(set)
        common = [m for m in models if all(m in present[t] for t in tasks)]
        dropped = [m for m in models if m not in common]
        if dropped:
            warnings.warn(
                f"models not present on every task are left out of the rank table: {dropped}",
                stacklevel=2,
            )
        base = {"tasks": tasks, "models": common, "dropped_models": dropped, "alpha": self.alpha}
        if len(tasks) < 2 or len(common) < 2:
            reason = (
                f"needs at least 2 tasks and 2 models present on every task; "
                f"have {len(tasks)} task(s) and {len(common)} such model(s)"
            )
            return RankAnalysis(applicable=False, reason=reason, **base)
        means = sel.groupby(["task", "model"])["value"].mean().unstack("model")
        means = means.loc[tasks, common]
        higher = [self.direction(t) == "max" for t in tasks]
        ranks = pd.DataFrame(
            stats.rank_models(means.to_numpy(), higher), index=means.index, columns=common
        )
        result = stats.friedman_test(ranks.to_numpy())
        mean_ranks = pd.Series(result.mean_ranks, index=common, name="mean_rank").sort_values(
            kind="stable"
        )
        return RankAnalysis(
            True, "", rank_table=ranks, mean_ranks=mean_ranks, friedman=result, **base
        )

    def critical_difference(self) -> CriticalDifference:
        """Nemenyi CD, cliques of models closer than CD, and pairwise Nemenyi p-values."""
        ranks = self.friedman()
        if not ranks.applicable:
            return CriticalDifference(ranks)
        k, n = len(ranks.models), len(ranks.tasks)
        r = ranks.mean_ranks
        cd = stats.nemenyi_cd(k, n, self.alpha)
        cliques = [tuple(r.index[i] for i in c) for c in stats.cd_cliques(r.to_numpy(), cd)]
        p = pd.DataFrame(stats.nemenyi_pvalues(r.to_numpy(), n), index=r.index, columns=r.index)
        return CriticalDifference(ranks, cd, stats.nemenyi_q(k, self.alpha), cliques, p)

    def cost(self) -> pd.DataFrame:
        """Per analysed (task, model): runs, mean wall time per run, mean epochs run,
        mean seconds per epoch and total wall time, from the records' ``cost:`` rows
        (empty when the source carried none, e.g. a CSV of metrics only)."""
        columns = ["task", "model", "n", "wall_s", "epochs", "s_per_epoch", "total_s"]
        cost = self.data[self.data["metric"].isin(["cost:wall_time_s", "cost:epochs_run"])]
        cells = self.selected()[["task", "model", "seed"]]
        cost = cost.merge(cells, on=["task", "model", "seed"])
        if cost.empty:
            return pd.DataFrame(columns=columns)
        wide = cost.pivot_table(
            index=["task", "model", "seed"], columns="metric", values="value", aggfunc="first"
        )
        wall = wide.get("cost:wall_time_s", pd.Series(np.nan, index=wide.index))
        epochs = wide.get("cost:epochs_run", pd.Series(np.nan, index=wide.index))
        per_epoch = wall / epochs.where(epochs > 0)
        rows = []
        for task, model in dict.fromkeys(zip(cells["task"], cells["model"], strict=True)):
            key = (task, model)
            if key not in wall.index.droplevel("seed"):
                continue
            w, e, pe = (x.xs(key, level=("task", "model")) for x in (wall, epochs, per_epoch))
            rows.append(
                {
                    "task": task,
                    "model": model,
                    "n": int(w.notna().sum()),
                    "wall_s": w.mean(),
                    "epochs": e.mean(),
                    "s_per_epoch": pe.mean(),
                    "total_s": w.sum(),
                }
            )
        return pd.DataFrame(rows, columns=columns)

    def power(self, delta: float | None = None, power: float = 0.8) -> pd.DataFrame:
        """Seed-count advisor per pair, from the pilot standard deviation of differences.

        ``mdd``: smallest difference the paired t-test detects with ``power`` at the
        current number of common seeds. ``seeds_needed``: seeds to detect ``delta``
        (default: the observed |Δμ| — optimistic, a planning aid only); ``inf`` where
        that would take more than 100 000 seeds.
        """
        pw = self.pairwise()
        rows = []
        for r in pw.itertuples(index=False):
            target = abs(r.mean_diff) if delta is None else abs(float(delta))
            ok = r.n_common >= 2 and np.isfinite(r.diff_std) and r.diff_std > 0
            mdd = (
                stats.min_detectable_difference(r.diff_std, r.n_common, power, self.alpha)
                if ok
                else np.nan
            )
            need = np.nan
            if ok and np.isfinite(target) and target > 0:
                try:
                    need = stats.seeds_needed(r.diff_std, target, power, self.alpha)
                except stats.TooManySeeds:  # a negligible observed gap: not worth chasing
                    need = np.inf
            rows.append(
                {
                    "task": r.task,
                    "model_a": r.model_a,
                    "model_b": r.model_b,
                    "n_common": r.n_common,
                    "diff_std": r.diff_std,
                    "mdd": mdd,
                    "delta": target,
                    "seeds_needed": need,
                    "power": power,
                }
            )
        return pd.DataFrame(
            rows,
            columns=[
                "task",
                "model_a",
                "model_b",
                "n_common",
                "diff_std",
                "mdd",
                "delta",
                "seeds_needed",
                "power",
            ],
        )

    # ------------------------------------------------------------------- output
    def to_dict(self, include_analysis: bool = False) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "kind": "graphnetz.benchmark_report",
            "settings": self.settings(),
            "primary_metrics": self.primary_metrics,
            "provenance": self.provenance,
            "runs": {"skipped": self.skipped, "failed": self.failed, "unreadable": self.unreadable},
            "results": self.data.to_dict("records"),
        }
        if include_analysis:
            from .serialize import analysis_dict

            doc["analysis"] = analysis_dict(self)
        return doc

    def to_json(self, path: str | Path, include_analysis: bool = False) -> Path:
        """Schema-versioned JSON of the raw results (+ computed analysis if asked); atomic."""
        from .serialize import dumps

        return write_text(path, dumps(self.to_dict(include_analysis)))

    def to_markdown(self, figures: str | None = None) -> str:
        from .markdown import render

        return render(self, figures)

    def to_latex(self, directory: str | Path) -> list[Path]:
        from .latex import write_tables

        return write_tables(self, directory)

    def plot(self, directory: str | Path) -> list[Path]:
        from .figures import write_figures

        return write_figures(self, directory)

    def write(self, directory: str | Path) -> Path:
        """Write report.md, report.json, results.csv, summary.csv, tables/ and figures/."""
        from .writer import write_report

        return write_report(self, directory)

    def __repr__(self) -> str:
        return (
            f"BenchmarkReport({len(self.tasks)} tasks, {len(self.models)} models, "
            f"{len(self.selected())} values, ci={self.ci!r}, pairwise_method={self.pairwise_method!r})"
        )
