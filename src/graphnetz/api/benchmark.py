"""``run_benchmark``: tasks x models x seeds through the same pipeline as ``train.py -m``.

Every run's config is the real one composed from ``conf/`` (``task=<type>``, and
``dataset=`` / ``model=`` for catalogue datasets and conf/model YAMLs), then the caller's
settings. A user dataset or model takes the place of its config node with a description of
itself, and reaches the run as a built object
(:func:`graphnetz.training.run.run_experiment`'s ``load_data`` and ``model_factory``), so
records, skips and failures are those of a Hydra sweep and the result is the
:class:`BenchmarkReport` ``analyze.py`` builds.
"""

from __future__ import annotations

import copy
import functools
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf, open_dict

from graphnetz.api.models import ModelSpec, conf_model_of, conf_models, model_spec
from graphnetz.api.registry import MODELS
from graphnetz.api.tasks import BenchmarkTask, iter_benchmark_tasks
from graphnetz.config_dir import CONF_DIR
from graphnetz.report import BenchmarkReport
from graphnetz.run_record import RunRecord
from graphnetz.training.resolve import resolve_run, resolved_paths
from graphnetz.training.run import own_run_dir, run_experiment, summarize
from graphnetz.training.stacked import MAX_STACK, discard_waiting, stack_refusal, train_ahead

# chosen by run_benchmark's own arguments, so a setting of them would contradict it
RESERVED = {"seed": "seeds=", "dataset": "tasks= / category=", "model": "models=", "task": "tasks="}

ModelChoice = str | ModelSpec  # a conf/model YAML name, or a user model


class BenchmarkFailed(RuntimeError):
    """No run of the benchmark produced a result; the message lists why."""


@dataclass(frozen=True)
class Planned:
    """One task x model of the benchmark: its composed config (seed 0) and user objects."""

    task: BenchmarkTask
    model: str
    cfg: DictConfig
    spec: ModelSpec | None  # None: a conf/model YAML builds it


# ---------------------------------------------------------------- inputs
def select_tasks(
    category: str | None,
    task_type: str | None,
    tasks: Iterable[BenchmarkTask | str] | None,
    only: Iterable[str] | str | None = None,
) -> list[BenchmarkTask]:
    """The tasks of ``category`` (narrowed by ``task_type``), or ``tasks=`` (a ``Task`` of
    another type than ``task_type`` left out, as in the reference package); then only
    those whose name or key is in ``only``."""
    if tasks is None:
        if category is None:
            categories = sorted({t.category for t in iter_benchmark_tasks()})
            raise ValueError(f"run_benchmark needs a category (one of {categories}) or tasks=[...]")
        selected = iter_benchmark_tasks(category, task_type)
    else:
        selected = [
            t
            for item in ([tasks] if isinstance(tasks, str | BenchmarkTask) else tasks)
            for t in _named_tasks(item, task_type)
        ]
    if only is not None:
        wanted = {only} if isinstance(only, str) else set(only)
        selected = [t for t in selected if wanted & {t.name, t.key}]
    if not selected:
        raise ValueError(
            f"no benchmark task matches category={category!r}, task_type={task_type!r}"
            + ("" if only is None else f", only={only!r}")
        )
    keys = [t.key for t in selected]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(
            f"tasks must be unique (reports identify them by key); repeated: {repeated}"
        )
    return selected


def _named_tasks(item: BenchmarkTask | str, task_type: str | None) -> list[BenchmarkTask]:
    if isinstance(item, BenchmarkTask):
        return [item] if task_type in (None, item.task_type) else []
    catalogue = iter_benchmark_tasks()
    found = [t for t in catalogue if item in (t.key, t.name) and task_type in (None, t.task_type)]
    if not found:
        raise ValueError(
            f"no benchmark task {item!r}{f' of type {task_type!r}' if task_type else ''}; "
            f"valid: {sorted(t.key for t in catalogue)}"
        )
    return found


def select_models(models: Any) -> list[tuple[str, ModelChoice]]:
    """``{name: model}`` (a list of models, or one) -> (name, conf/model name | user spec)."""
    if not models:
        raise ValueError(
            "models= is required: a dict {name: model} or a list of models; a model is a "
            "conf/model name ('gcn'), a registered name, a class or a (cls, task_type) tuple"
        )
    if isinstance(models, str | type | tuple | ModelSpec):
        models = [models]  # one model, named after its class
    if isinstance(models, Mapping):
        items = list(models.items())
    else:
        items = [(_default_name(m), m) for m in models]
    names = [name for name, _ in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"model names must be unique; repeated: {repeated}")
    chosen: list[tuple[str, ModelChoice]] = []
    for name, value in items:
        registered = isinstance(value, str) and value in MODELS
        if isinstance(value, str) and not registered:
            if value not in conf_models():
                raise ValueError(
                    f"model {name!r}: unknown model {value!r}; conf/model: "
                    f"{sorted(conf_models())}; registered: {sorted(MODELS)}"
                )
            chosen.append((name, value))
            continue
        is_registered = any(s.cls is value for s in MODELS.values())
        stem = conf_model_of(value) if isinstance(value, type) and not is_registered else None
        chosen.append((name, stem or model_spec(name, value)))
    return chosen


def _default_name(model: Any) -> str:
    if isinstance(model, str | ModelSpec):
        return model if isinstance(model, str) else model.name
    cls = model[0] if isinstance(model, tuple) and model else model
    return getattr(cls, "__name__", str(cls))


def _seeds(seeds: Iterable[int] | int | None, seed: int | None) -> list[int]:
    """The run seeds: ``seeds`` (an iterable; an int is that one seed, as in the reference
    package), or the one ``seed``; default 0-9. Integers of any kind (``np.arange(3)``)."""
    if seed is not None:
        if seeds is not None:
            raise ValueError(f"give seeds= or seed=, not both (seeds={seeds!r}, seed={seed!r})")
        seeds = [seed]
    elif seeds is None:
        seeds = range(10)
    elif _is_integer(seeds):
        seeds = [seeds]
    values = list(seeds)
    if not values or not all(_is_integer(s) for s in values):
        raise ValueError(f"seeds= must be a non-empty iterable of integers; got {values!r}")
    return [int(s) for s in values]  # numpy's integers become ints (records store JSON)


def _is_integer(value: Any) -> bool:
    """An integer of any kind (``int``, ``np.int64``, ...), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _progress(progress: bool | None, verbose: bool | None) -> bool:
    """``verbose`` is the reference package's name for ``progress``."""
    if progress is not None and verbose is not None and bool(progress) != bool(verbose):
        raise ValueError(
            f"give progress= or verbose=, not both (progress={progress!r}, verbose={verbose!r})"
        )
    chosen = progress if progress is not None else verbose
    return True if chosen is None else bool(chosen)


def accelerator_settings(device: Any) -> dict[str, Any]:
    """The reference package's ``device=`` as trainer settings: ``"auto"``/None ->
    ``trainer.accelerator=auto``; ``"cpu"``, ``"cuda"``, ``"mps"`` (or a ``torch.device``)
    -> that accelerator; an index (``"cuda:1"``) -> also ``trainer.devices=[1]``."""
    if device is None or device == "auto":
        return {"trainer.accelerator": "auto"}
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            f"device={device!r} is not a device; use 'auto', 'cpu', 'cuda', 'cuda:<index>' "
            "or 'mps' (or the setting trainer.accelerator)"
        ) from err
    accelerators = {"cpu": "cpu", "cuda": "gpu", "mps": "mps"}
    if parsed.type not in accelerators:
        raise ValueError(
            f"device={device!r}: the trainer runs on {sorted(accelerators)} or 'auto'; "
            "other accelerators through the setting trainer.accelerator"
        )
    chosen: dict[str, Any] = {"trainer.accelerator": accelerators[parsed.type]}
    if parsed.index is not None:
        chosen["trainer.devices"] = [parsed.index]
    return chosen


def settings_of(
    overrides: Sequence[str] | Mapping[str, Any] | None, dotted: Mapping[str, Any]
) -> dict[str, Any]:
    """``{"task.lr": 5e-3}`` from a mapping, dotted keywords and/or Hydra override strings
    (``"task.lr=5e-3"``, parsed by Hydra's own parser)."""
    if isinstance(overrides, str):
        overrides = [overrides]
    settings: dict[str, Any] = {}
    if isinstance(overrides, Mapping):
        settings.update(overrides)
    elif overrides:
        for parsed in OverridesParser.create().parse_overrides(list(overrides)):
            if parsed.is_delete() or parsed.is_sweep_override():
                raise ValueError(
                    f"override {parsed.input_line!r}: run_benchmark takes single values "
                    "(sweep over seeds/models/tasks with its own arguments)"
                )
            settings[parsed.key_or_group] = parsed.value()
    settings.update(dotted)
    for key in settings:
        if key in RESERVED:
            raise ValueError(
                f"setting {key!r} is chosen by run_benchmark itself; use {RESERVED[key]} instead"
            )
    return settings


def apply_setting(cfg: DictConfig, key: str, value: Any, where: str) -> None:
    """Set an existing config key (a typo names the keys there are instead)."""
    parent_key, _, leaf = key.rpartition(".")
    parent = OmegaConf.select(cfg, parent_key) if parent_key else cfg
    if not isinstance(parent, DictConfig) or leaf not in parent:
        keys = sorted(parent) if isinstance(parent, DictConfig) else []
        raise ValueError(
            f"unknown setting {key!r} for {where}; {parent_key or 'the config'} has {keys}"
        )
    OmegaConf.update(cfg, key, value, merge=False)


# ---------------------------------------------------------------- configs
def plan(
    tasks: list[BenchmarkTask], models: list[tuple[str, ModelChoice]], settings: dict[str, Any]
) -> list[Planned]:
    """One composed config per (task, model), seed 0, the caller's settings applied."""
    planned = []
    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        for task in tasks:
            for name, choice in models:
                chosen = [f"task={task.task_type}", "seed=0"]
                chosen += [f"dataset={task.conf}"] if task.conf else []
                chosen += [f"model={choice}"] if isinstance(choice, str) else []
                cfg = compose("config", overrides=chosen)
                with open_dict(cfg):
                    if task.conf is None:
                        cfg.dataset = task.config_node()
                    else:  # the catalogue task as given (its YAML's values unless replaced)
                        cfg.dataset.split = task.split
                        if task.epochs is not None:
                            cfg.dataset.epochs[task.task_type] = task.epochs
                    if not isinstance(choice, str):
                        cfg.model = choice.config_node()
                    cfg.model.name = name
                for key, value in settings.items():
                    apply_setting(cfg, key, value, f"{task.key} x {name}")
                spec = None if isinstance(choice, str) else choice
                planned.append(Planned(task, name, cfg, spec))
    return planned


def user_data(task: BenchmarkTask, data_dir: str) -> Callable[[int], Any]:
    """``seed -> the task's data``, loaded once (once per seed for a loader taking one) and
    shared by the models; runs that are skipped never call it."""
    cache: dict[int | None, Any] = {}

    def load(seed: int) -> Any:
        key = seed if task.seeded else None
        if key not in cache:
            cache[key] = task.load(str(Path(data_dir) / task.name), seed)
        return cache[key]

    return load


# ---------------------------------------------------------------- the benchmark
def run_benchmark(
    category: str | None = None,
    models: Any = None,
    root: str | Path | None = None,
    hidden_channels: int | None = None,
    epochs: int | None = None,
    only: Iterable[str] | str | None = None,
    verbose: bool | None = None,
    seeds: Iterable[int] | int | None = None,
    seed: int | None = None,
    task_type: str | None = None,
    tasks: Iterable[BenchmarkTask | str] | None = None,
    device: Any = None,
    search: Any = None,
    *,
    out_dir: str | Path | None = None,
    overrides: Sequence[str] | Mapping[str, Any] | None = None,
    progress: bool | None = None,
    **dotted_settings: Any,
) -> BenchmarkReport:
    """Run every selected task x model x seed and return the statistical report.

    The arguments before ``out_dir`` are the reference package's, in its order. Tasks: a
    ``category`` of the catalogue (narrowed by ``task_type``), or ``tasks=`` (``Task``
    objects, e.g. from ``task_from_dataset``, or catalogue names ``"cora"`` /
    ``"cora/link_pred"``; a ``Task`` of another type than ``task_type`` is left out; a
    ``category`` given too puts user tasks' data under ``<root>/<category>/``); ``only``
    keeps the tasks whose name (or key) it lists. ``models``: ``{name: model}`` where a
    model is a conf/model name (``"gcn"``), a registered name, a class (one a conf/model
    YAML builds uses that YAML) or ``(cls, task_type[, factory])``. ``seeds`` (default
    0-9; an int is that one seed) or ``seed``. ``epochs`` sets every task's epochs,
    ``hidden_channels`` every model's width (``model.hidden_channels``), ``root`` the data
    directory (``paths.data_dir``), ``device`` the accelerator (``trainer.accelerator``),
    ``progress`` (or ``verbose``) the progress lines. ``search=`` is refused: tune with
    ``python -m graphnetz tune``. Settings: dotted keys (``**{"task.lr": 5e-3}``) or
    ``overrides=["task.lr=5e-3"]``. With ``out_dir`` each record goes to
    ``out_dir/<dataset>/<task_type>/<model>/seed_<s>/result.json``. Incompatible pairs are
    skipped, failed runs recorded; both are listed by the report, and with progress a
    closing summary names tasks whose data is unavailable. Raises :class:`BenchmarkFailed`
    when no run produced a result.
    """
    if search is not None:
        raise NotImplementedError(
            "search= (the reference package's inner hyperparameter search) is not run by "
            "run_benchmark: tune one task x model with `python -m graphnetz tune` "
            "(docs/tuning.md), then pass the selected values as settings "
            "(e.g. **{'task.lr': 5e-3}) or run the seed sweep with +tuned=<study>"
        )
    selected = select_tasks(category, task_type, tasks, only)
    chosen = select_models(models)
    seed_list = _seeds(seeds, seed)
    progress = _progress(progress, verbose)
    settings = settings_of(overrides, dotted_settings)
    named = {"trainer.max_epochs": ("epochs", epochs)}
    named["model.hidden_channels"] = ("hidden_channels", hidden_channels)
    named["paths.data_dir"] = ("root", None if root is None else str(root))
    if device is not None:
        named.update({k: ("device", v) for k, v in accelerator_settings(device).items()})
    for key, (argument, value) in named.items():
        if value is None:
            continue
        if key in settings:
            raise ValueError(f"give {argument}= or the {key} setting, not both")
        settings[key] = value
    data_subdir = category if tasks is not None and category is not None else ""
    planned = plan(selected, chosen, settings)
    paths = resolved_paths(OmegaConf.to_container(planned[0].cfg.paths, resolve=True))
    data_dir = str(Path(paths["data_dir"]) / data_subdir)
    loaders = {t.key: user_data(t, data_dir) for t in selected if t.conf is None}
    records: list[RunRecord] = []
    total = len(planned) * len(seed_list)
    for run in planned:
        if run.spec is None and run.task.key not in loaders:  # the config's model and data
            _stack_seeds(run.cfg, seed_list, out_dir, run.task.key, run.model)
        for seed in seed_list:
            cfg = copy.deepcopy(run.cfg)
            cfg.seed = seed
            key = run.task.key
            run_dir = None if out_dir is None else Path(out_dir) / key / run.model / f"seed_{seed}"
            factory = None
            if run.spec is not None:
                model_cfg = OmegaConf.to_container(cfg.model, resolve=True)
                factory = run.spec.model_factory(model_cfg, run.task.task_type)
            load = functools.partial(loaders[key], seed) if key in loaders else None
            records.append(run_experiment(cfg, run_dir, load, factory))
            if progress:
                print(f"[{len(records)}/{total}] {summarize(records[-1])}", flush=True)
    discard_waiting()
    if not any(r.status == "ok" for r in records):
        raise BenchmarkFailed(outcome(records))
    report = BenchmarkReport.from_records([r.to_dict() for r in records])
    if progress:
        print(outcome(records, report))
    return report


def _stack_seeds(cfg: DictConfig, seeds: list[int], out_dir, key: str, model: str) -> None:
    """Train the seeds of one task x model stacked ahead of their runs, where they stack
    (:mod:`graphnetz.training.stacked`: each seed's record is its run alone's)."""
    specs, run_dirs = [], []
    for seed in seeds[:MAX_STACK]:
        seeded = copy.deepcopy(cfg)
        seeded.seed = seed
        try:
            spec = resolve_run(seeded)
        except Exception:  # its run records why
            return
        if stack_refusal(spec) is not None:
            return
        specs.append(spec)
        run_dir = None if out_dir is None else Path(out_dir) / key / model / f"seed_{seed}"
        resuming = bool(spec.config.get("resume"))
        if run_dir is not None:  # where the run will train; it says so itself when it runs
            run_dir = own_run_dir(spec.identity, run_dir, resuming, quiet=True)
        run_dirs.append(run_dir)
    train_ahead(specs, run_dirs)


def outcome(records: list[RunRecord], report: BenchmarkReport | None = None) -> str:
    """What the benchmark produced: the counts, the summary, then one line per task and
    kind of problem (data unavailable, failed; skipped too when nothing ran)."""
    count = {s: sum(r.status == s for r in records) for s in ("ok", "skipped", "failed")}
    lines = [f"{len(records)} runs: " + ", ".join(f"{n} {s}" for s, n in count.items())]
    if report is None:
        lines[0] = f"no run produced a result ({lines[0]})"
    else:
        columns = ["task", "model", "n", "metric", "mean", "half_width"]
        lines.append(report.summary()[columns].to_string(index=False))
    problems: dict[tuple[str, str], str] = {}
    for r in records:
        if r.status == "failed" or (r.status == "skipped" and report is None):
            missing = re.search(r"(dataset '[^']*' is unavailable: [^(]*)", r.reason or "")
            kind = "unavailable" if missing else r.status
            head = (r.reason or "").split("\n")  # Hydra's wrapper names the error 2nd
            why = (
                missing[1].strip()
                if missing
                else " ".join(head[:2] if head[0].endswith(":") else head[:1])
            )
            problems.setdefault((kind, f"{r.task or r.dataset}"), why)
    lines += [f"{kind}: {task}: {why}" for (kind, task), why in sorted(problems.items())]
    return "\n".join(lines)


__all__ = ["BenchmarkFailed", "run_benchmark"]
