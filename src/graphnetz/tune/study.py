"""A resumable Optuna study per (task, model) on the validation metric.

Each trial trains the point once per inner seed (``run_experiment``, records on disk under
``<out>/<study>/trials/<point>/s<seed>``) and scores it by the mean of the runs'
**validation** primary metric (``RunRecord.validation_value``), named as the runs name it
(``RunRecord.primary_metric``: ``mrr`` for knowledge graphs, not the task's ``auc``). No
test score's value is read; only a run's status is, and a run is ``diverged`` when its
loss or its primary metric on any split, test included, is not finite
(:mod:`graphnetz.training.divergence`).

A trial whose runs diverged or give no finite score, or whose point gives a config that
cannot run (refused when resolved, before any data is loaded), fails in the study and
counts against the budget: the point is bad. A trial whose run failed with an error
(``failed``: data missing, out of memory) may be the point's fault or not: it is retried
at the same point until it has failed :data:`ERROR_ATTEMPTS` times in all (the count is
kept in the study, so a rerun goes on counting, and tries it at least once). It is then
held, and the next point decides: if that one trains, the environment works, so the held
trial fails in the study (the point is bad: out of memory at the widest setting, a model
that cannot be built there) and the search goes on; the study may so end one trial over
its budget. Once :data:`ERRORED_POINTS` points asked in a row (a held one first) have not
trained, the cause is likely not the points (a data set or mirror missing): the search
stops with the run's error, the held trials left unfinished and outside the budget; rerun
the same command once the cause is fixed. Errors before training (loading the data,
building the model) are retried too: a run's record does not tell the two apart, and
retrying them costs no training.

Persistent and resumable: the study lives in an Optuna journal file
(``<out>/<study>/study.journal``). A killed search, rerun with the same command, first
finishes the trials it had started (their finished inner runs are reused, the cut-off one
continues from its checkpoint), then asks for new ones until ``budget`` trials are done.
Each new trial's sampler is seeded with ``sampler_seed + trial number``, so a resumed
search proposes the same points as an uninterrupted one. The study records its search
(space, inner seeds, sampler settings, and the base run's result-bearing config): a rerun
that would search something else is refused.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from filelock import FileLock, Timeout
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from graphnetz.config_dir import CONF_DIR
from graphnetz.run_identity import (
    RESULT_NEUTRAL_KEYS,
    TRAINER_NEUTRAL_KEYS,
    config_identity,
    result_config,
)
from graphnetz.training.build import incompatibility
from graphnetz.training.resolve import resolve_run
from graphnetz.training.run import run_experiment, validation_scores_only
from graphnetz.tune.space import SearchSpace, SpaceError, bad_seeds

log = logging.getLogger("graphnetz")
JOURNAL_NAME = "study.journal"
OPTUNA_DIRECTIONS = {"max": "maximize", "min": "minimize"}
#: attempts, over all reruns, at a trial whose run fails with an error before it is held
ERROR_ATTEMPTS = 3
#: points asked in a row that do not train (a held one first) before the search stops
ERRORED_POINTS = 2
#: the study's user attribute counting each trial's attempts that failed with an error
ERRORS_ATTR = "error_attempts"
#: the search settings a resumed study must share, besides the base config
SEARCH_KEYS = ("space", "inner_seeds", "sampler_seed", "n_startup_trials")


class TuneError(ValueError):
    """A search that cannot run as asked; the message says what and why."""


@dataclass(frozen=True)
class TuneResult:
    """The selected point of a finished study, and how it was found."""

    study: str
    storage: str
    space: str
    params: dict[str, Any]
    value: float
    metric: str
    direction: str
    inner_seeds: tuple[int, ...]
    budget: int
    trials_complete: int
    trials_failed: int
    base_overrides: tuple[str, ...]
    for_run: dict[str, str]
    base_values: dict[str, Any]
    sampler_seed: int
    n_startup_trials: int

    def tuning_block(self) -> dict[str, Any]:
        """What ``+tuned=<study>`` puts in every run's config (and so in its record)."""
        return {
            "study": self.study,
            "storage": self.storage,
            "space": self.space,
            "budget": self.budget,
            "trials_complete": self.trials_complete,
            "trials_failed": self.trials_failed,
            "objective": f"mean val {self.metric} over inner seeds",
            "metric": f"val/{self.metric}",
            "direction": self.direction,
            "inner_seeds": list(self.inner_seeds),
            "value": self.value,
            "params": dict(self.params),
            "sampler": "optuna TPESampler",
            "sampler_seed": self.sampler_seed,
            "n_startup_trials": self.n_startup_trials,
            "for": dict(self.for_run),
            "overrides": list(self.base_overrides),
            "values": dict(self.base_values),
        }


@dataclass(frozen=True)
class Evaluation:
    """A trial's outcome: the mean validation score and the metric the runs name, or why
    there is none; ``error``: a run failed with an error, which need not be the point's
    fault; ``trained``: its runs trained (ok or diverged), so the environment works."""

    value: float | None = None
    metric: str | None = None
    why: str = ""
    error: bool = False
    trained: bool = False


def compose_run(overrides: Sequence[str]) -> DictConfig:
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides))


def point_overrides(point: dict[str, Any]) -> list[str]:
    return [f"{key}={json.dumps(value)}" for key, value in point.items()]


def point_key(point: dict[str, Any]) -> str:
    """A short stable name of a point: its trial folder (a repeated point reuses it)."""
    text = json.dumps(point, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def check_base_overrides(overrides: Sequence[str], space: SearchSpace) -> None:
    """One (task, model): no sweep, no seed (the inner seeds are the search's), and no key
    the search itself sets."""
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.get_key_element()
        if override.is_sweep_override():
            raise TuneError(
                f"{key}: a search is for one (task, model); run one search per value "
                f"instead of a sweep ({override.input_line!r})"
            )
        if key.lstrip("+~") == "seed":
            raise TuneError("seed: the search trains its inner_seeds; do not set seed")
        if key.lstrip("+~") in space.params:
            raise TuneError(f"{key} is searched by space {space.name!r}; do not also set it")


def base_values(overrides: Sequence[str], cfg: DictConfig) -> dict[str, Any]:
    """The plain values the search's overrides set (``trainer.max_epochs=3``: 3), as
    composed: a tuned run must train with the same ones. Group choices (``dataset=cora``,
    ``experiment=...``) are left to the tuned point's ``for``; settings that do not change
    a result (threads, paths, resuming: ``run_identity``) are not recorded."""
    values = {}
    absent = object()  # a group choice such as experiment=... is no key of the config
    # (a deleted key, ~task.patience, is recorded as null: a tuned run must lack it too)
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        key = override.get_key_element().lstrip("+~")
        value = OmegaConf.select(cfg, key, default=absent)
        top, _, rest = key.partition(".")
        neutral = top in RESULT_NEUTRAL_KEYS or (top == "trainer" and rest in TRAINER_NEUTRAL_KEYS)
        if neutral or isinstance(value, DictConfig | ListConfig):
            continue
        if value is absent and not override.is_delete():
            continue
        values[key] = None if value is absent else value
    return values


def base_config(cfg: DictConfig, searched: Sequence[str]) -> dict[str, Any]:
    """The base run's result-bearing config as ``{dotted key: value}``: what every trial
    trains besides its point. The searched keys are set to null before resolving (a value
    interpolated from one, ``task.optimizer.lr: ${..lr}``, does not pin its default) and
    left out, as are the seed and a ``tuning`` block."""
    nulled = copy.deepcopy(cfg)
    for key in searched:
        OmegaConf.update(nulled, key, None, merge=False)
    try:
        resolved = OmegaConf.to_container(nulled, resolve=True)
    except OmegaConfBaseException:  # an interpolation that needs a value: the defaults
        resolved = OmegaConf.to_container(cfg, resolve=True)
    config = result_config(resolved)
    flat = {k: v for k, v in _flat(config).items() if k not in searched}
    return {k: v for k, v in flat.items() if k != "seed" and k.split(".")[0] != "tuning"}


def _flat(node: Any, prefix: str = "") -> dict[str, Any]:
    # report.records flattens a run's config the same way, but inside a helper of run
    # records (and the report sits downstream of the search): a shared flattening of a
    # result config belongs in run_identity
    if not isinstance(node, Mapping) or not node:
        return {prefix: node}
    flat: dict[str, Any] = {}
    for key, value in node.items():
        flat.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def config_changes(before: Mapping[str, Any], now: Mapping[str, Any], shown: int = 5) -> str:
    """``key: old -> new`` for the keys that differ (the first ``shown`` of them)."""
    keys = sorted(k for k in {*before, *now} if before.get(k, "<absent>") != now.get(k, "<absent>"))
    text = "; ".join(
        f"{k}: {before.get(k, '<absent>')!r} -> {now.get(k, '<absent>')!r}" for k in keys[:shown]
    )
    return text + (f"; and {len(keys) - shown} more" if len(keys) > shown else "")


def validation_score(records: Sequence[Any]) -> float | None:
    """The mean validation primary metric of ok runs; None when one is missing/non-finite."""
    values = [r.validation_value() for r in records]
    if not values or any(v is None or not math.isfinite(v) for v in values):
        return None
    return sum(values) / len(values)


class Search:
    """One study: ``Search(overrides, space, out_dir).run()`` -> :class:`TuneResult`."""

    def __init__(
        self,
        overrides: Sequence[str],
        space: SearchSpace,
        out_dir: str | Path,
        budget: int | None = None,
        inner_seeds: Sequence[int] | None = None,
    ) -> None:
        check_base_overrides(overrides, space)
        self.overrides, self.space = list(overrides), space
        self.budget = budget if budget is not None else space.budget
        self.inner_seeds = tuple(inner_seeds if inner_seeds is not None else space.inner_seeds)
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise TuneError(f"budget must be a positive number of trials, got {self.budget!r}")
        bad = bad_seeds(self.inner_seeds)
        if bad:  # before anything is written: a seed numpy/torch refuse fails every trial
            raise TuneError(
                f"inner seeds must be integers >= 0 (below 2**32), got {', '.join(map(repr, bad))} "
                f"in {list(self.inner_seeds)}"
            )
        if not self.inner_seeds or len(set(self.inner_seeds)) != len(self.inner_seeds):
            raise TuneError(f"inner seeds must be distinct, got {list(self.inner_seeds)}")
        cfg = compose_run([*self.overrides, f"seed={self.inner_seeds[0]}"])
        absent = object()  # a key set to null (task.patience) is there, and searchable
        missing = [k for k in space.params if OmegaConf.select(cfg, k, default=absent) is absent]
        if missing:
            raise SpaceError(
                f"space {space.name!r} sets {missing}, which the config of "
                f"{' '.join(self.overrides) or 'the defaults'} does not have"
            )
        spec = resolve_run(cfg)
        unfit = incompatibility(spec.config["model"], spec.task_type)
        if unfit is not None:  # every trial would be skipped
            raise TuneError(f"nothing to tune: {unfit}")
        self.base_values = base_values(self.overrides, cfg)
        self.base_config = base_config(cfg, list(space.params))
        # the metric is the runs' own (records): the task class's may be refined by the data
        self.direction = spec.task_cls.direction
        self.for_run = {"dataset": spec.dataset, "task_type": spec.task_type, "model": spec.model}
        self.name = f"{spec.dataset}_{spec.task_type}_{spec.model}"
        self.dir = Path(out_dir) / self.name
        self.storage_path = self.dir / JOURNAL_NAME

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, point: dict[str, Any]) -> Evaluation:
        """Train ``point`` once per inner seed (finished runs are reused)."""
        records = []
        for seed in self.inner_seeds:
            try:  # the config at this point: what cannot run here fails on every attempt
                cfg = compose_run(
                    [*self.overrides, *point_overrides(point), f"seed={seed}", "resume=true"]
                )
                resolve_run(cfg)
            except Exception as err:
                return Evaluation(why=f"its config cannot run: {type(err).__name__}: {err}")
            with validation_scores_only():  # the search's log shows no test score
                record = run_experiment(cfg, self.dir / "trials" / point_key(point) / f"s{seed}")
            if record.status == "failed":
                where = f" (run {record.run_dir})" if record.run_dir else ""
                return Evaluation(why=f"seed {seed}: {record.reason}{where}", error=True)
            if record.status != "ok":
                why = f"seed {seed}: {record.status} ({record.reason})"
                return Evaluation(why=why, trained=record.status == "diverged")
            records.append(record)
        metrics = sorted({str(r.primary_metric) for r in records})
        if len(metrics) != 1:
            raise TuneError(
                f"the runs of {self.name} at {point} report different primary metrics "
                f"{metrics}; a score averages one metric"
            )
        score = validation_score(records)
        if score is None:
            return Evaluation(why="a validation score is missing or not finite", trained=True)
        return Evaluation(value=score, metric=metrics[0], trained=True)

    # ------------------------------------------------------------------ the study
    def _study(self) -> optuna.Study:
        self.dir.mkdir(parents=True, exist_ok=True)
        storage = JournalStorage(JournalFileBackend(str(self.storage_path)))
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.create_study(
            study_name=self.name,
            storage=storage,
            direction=OPTUNA_DIRECTIONS[self.direction],
            load_if_exists=True,
        )
        asked = {"space": self.space.params, "inner_seeds": list(self.inner_seeds)}
        asked["overrides"] = sorted(self.overrides)
        asked["sampler_seed"] = self.space.sampler_seed
        asked["n_startup_trials"] = self.space.n_startup_trials
        asked["config"] = self.base_config
        # the SHA-256 of its canonical JSON, as a run's identity (it has no neutral key)
        asked["config_digest"] = config_identity(self.base_config)
        asked = json.loads(json.dumps(asked, default=str))
        known = study.user_attrs.get("search")
        if known is None:
            study.set_user_attr("search", asked)
        else:
            self._check_same_search(known, asked)
            if "config_digest" not in known:  # begun before the config was recorded
                study.set_user_attr("search", {**known, **asked})
        return study

    def _check_same_search(self, known: dict[str, Any], asked: dict[str, Any]) -> None:
        """Refuse to add trials to a study of another search. Its base config is compared
        (conf/ files, group and experiment choices, overrides that change a result), not
        the override strings: a new data mirror or thread count is the same search."""
        where = f"{self.storage_path} holds another search of {self.name}"
        if "config_digest" in known and known["config_digest"] != asked["config_digest"]:
            changes = config_changes(known.get("config") or {}, asked["config"]) or "digest"
            raise TuneError(
                f"{where}: its base config differs ({changes}); rerun with the config it "
                "searched, or choose another output folder"
            )
        # a study begun before the config (or the sampler settings) was recorded is
        # compared by its override strings (and without them)
        keys = [*SEARCH_KEYS, *(["overrides"] if "config_digest" not in known else [])]
        differ = [k for k in keys if k in known and known[k] != asked[k]]
        if differ:
            earlier = {k: known[k] for k in differ}
            raise TuneError(
                f"{where}: {', '.join(differ)} differ (the study has {earlier}); choose "
                "another output folder"
            )

    def _finish(self, study: optuna.Study, number: int, point: dict[str, Any]) -> Evaluation:
        """Evaluate trial ``number`` at ``point`` and tell the study, unless its runs fail
        with an error: it is then retried until it has failed :data:`ERROR_ATTEMPTS` times
        in all (at least once in this call) and returned untold, for :meth:`_settle` to hold."""
        done = self._error_attempts(study).get(str(number), 0)
        for _ in range(max(1, ERROR_ATTEMPTS - done)):
            outcome = self.evaluate(point)
            if not outcome.error:
                break
            done = self._count_error(study, number)
            log.warning(
                "tune %s trial %d: a run failed with an error (attempt %d of %d): %s",
                self.name,
                number,
                done,
                ERROR_ATTEMPTS,
                outcome.why,
            )
        else:
            return outcome
        if outcome.value is None:
            log.warning("tune %s trial %d failed: %s", self.name, number, outcome.why)
            study.tell(number, state=TrialState.FAIL)
            return outcome
        self._check_metric(study, str(outcome.metric), number)
        log.info(
            "tune %s trial %d: val %s = %.4f  %s",
            self.name,
            number,
            outcome.metric,
            outcome.value,
            point,
        )
        study.tell(number, outcome.value)
        return outcome

    @staticmethod
    def _error_attempts(study: optuna.Study) -> dict[str, int]:
        return dict(study.user_attrs.get(ERRORS_ATTR) or {})

    def _count_error(self, study: optuna.Study, number: int) -> int:
        """Count one more attempt at trial ``number`` that failed with an error, in the
        journal (a rerun goes on counting); the count so far."""
        counts = self._error_attempts(study)
        counts[str(number)] = counts.get(str(number), 0) + 1
        study.set_user_attr(ERRORS_ATTR, counts)
        return counts[str(number)]

    def _settle(
        self, study: optuna.Study, number: int, point: dict[str, Any], held: dict[int, str]
    ) -> Evaluation:
        """:meth:`_finish` trial ``number``; hold it if its runs keep failing with an error,
        and fail the held trials once a point trains: the fault was theirs."""
        outcome = self._finish(study, number, point)
        if outcome.error:
            held[number] = f"at {point}: {outcome.why}"
        elif outcome.trained:
            for other, why in held.items():
                log.warning(
                    "tune %s trial %d failed: its runs failed with an error %d times %s, "
                    "and trial %d trained",
                    self.name,
                    other,
                    ERROR_ATTEMPTS,
                    why,
                    number,
                )
                study.tell(other, state=TrialState.FAIL)
            held.clear()
        return outcome

    def _check_metric(self, study: optuna.Study, metric: str, number: int) -> None:
        """Every scored trial of a study is on one metric, the one the study records."""
        known = study.user_attrs.get("metric")
        if known is None:
            study.set_user_attr("metric", metric)
        elif known != metric:
            raise TuneError(
                f"trial {number} of {self.name} scored val {metric}, the study's earlier "
                f"trials val {known}; a study compares one metric"
            )

    def run(self) -> TuneResult:
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(str(self.dir / ".tune.lock"), timeout=0):
                return self._run()
        except Timeout:
            raise TuneError(f"another search is running on {self.dir}; wait for it") from None

    def _run(self) -> TuneResult:
        study = self._study()
        held: dict[int, str] = {}  # trials whose runs keep failing with an error: why
        for cut in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if set(cut.params) == set(self.space.params):  # cut off or held: finish it
                log.info("tune %s: finishing trial %d, left unfinished", self.name, cut.number)
                self._settle(study, cut.number, dict(cut.params), held)
            else:
                study.tell(cut.number, state=TrialState.FAIL)
        untrained = 0  # new points in a row that did not train since a trial was held
        while _done(study) < self.budget or held:  # a held trial waits for a point to train
            if untrained >= ERRORED_POINTS:
                raise self._not_the_points(held)
            number = len(study.get_trials(deepcopy=False))
            study.sampler = optuna.samplers.TPESampler(
                seed=self.space.sampler_seed + number,
                n_startup_trials=self.space.n_startup_trials,
            )
            trial = study.ask()
            self._settle(study, trial.number, self.space.suggest(trial), held)
            untrained = untrained + 1 if held else 0
        return self._result(study)

    def _not_the_points(self, held: dict[int, str]) -> TuneError:
        trials = ", ".join(f"trial {n} {why}" for n, why in held.items())
        return TuneError(
            f"the runs of {self.name} failed with an error at {len(held)} points, each "
            f"{ERROR_ATTEMPTS} times or more, and {ERRORED_POINTS} new points in a row did not "
            f"train, so the cause is likely not the points ({trials}). Fix it and rerun the "
            "same command: "
            "these trials are retried at their points and no budget was spent on them (a "
            "point that alone fails, out of memory at the widest setting, fails in the study "
            "once another point trains)"
        )

    def _result(self, study: optuna.Study) -> TuneResult:
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        failed = study.get_trials(deepcopy=False, states=(TrialState.FAIL,))
        if not complete:
            raise TuneError(
                f"no trial of {self.name} succeeded ({len(failed)} failed: see the runs in "
                f"{self.dir}; once their cause is fixed, start over in another --out)"
            )
        sign = -1 if self.direction == "max" else 1
        best = min(complete, key=lambda t: (sign * t.value, t.number))
        params = {k: best.params[k] for k in self.space.params}
        return TuneResult(
            study=self.name,
            storage=str(self.storage_path.resolve()),
            space=self.space.name,
            params=params,
            value=float(best.value),
            metric=self._metric(study, params, best.number),
            direction=self.direction,
            inner_seeds=self.inner_seeds,
            budget=max(self.budget, _done(study)),  # selected among every finished trial
            trials_complete=len(complete),
            trials_failed=len(failed),
            base_overrides=tuple(self.overrides),
            for_run=self.for_run,
            base_values=self.base_values,
            sampler_seed=self.space.sampler_seed,
            n_startup_trials=self.space.n_startup_trials,
        )

    def _metric(self, study: optuna.Study, best: dict[str, Any], number: int) -> str:
        """The metric the trials were scored on; a study begun before it was recorded reads
        it from the best trial's runs (finished: reused, not trained again)."""
        metric = study.user_attrs.get("metric")
        if metric is None:
            metric = self.evaluate(best).metric
            if metric is None:
                raise TuneError(f"the runs of trial {number} of {self.name} have no score")
            self._check_metric(study, metric, number)
        return str(metric)


def _done(study: optuna.Study) -> int:
    finished = (TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)
    return len(study.get_trials(deepcopy=False, states=finished))
