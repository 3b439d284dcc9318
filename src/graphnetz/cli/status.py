"""``python -m graphnetz status SWEEP_DIR [OVERRIDES ...]``: where a sweep stands.

Per cell (task x model): runs done (ok), skipped, diverged, failed (with the first line of
the error), cut off (a checkpoint and no record: resumed by ``resume=true``), started (a run
directory with neither: still running, or killed before its first checkpoint), unreadable
and missing; the time spent (in all of a run's folders, ``_rerun1`` ones included) and an
estimate of what is left (the cell's mean time per finished run, one folder each, else the
sweep's, times the runs left; a cut-off run counts for its epochs left).

A record is judged as ``analyze.py`` judges it (:func:`graphnetz.report.records.add_record`):
one it cannot read (cut short, an unknown status or schema version, no primary metric) is
``unreadable``, with why; an ``ok`` record whose primary test metric is NaN or infinite is
``failed``. A record of schema 1 (no identity) is matched to the planned run of its dataset,
task, model and seed; ``resume=true`` runs it again, and the dry run says so.

The runs the sweep should have come from the overrides given, as one would give them to
``python train.py -m``, or, without any, from the ``multirun.yaml`` Hydra wrote into the
sweep directory at its last launch (one that cannot be read, or that names an option that
does not exist, as a mistyped launch that failed before training leaves it, is named in a
warning and the runs found are shown). A directory that does not exist is a sweep not
launched yet: with overrides, every run is to do. They are expanded with Hydra's own sweep parser and
resolved to identities without loading data or training; the dry run prints the command
that resumes the sweep in place and lists each run it would launch (a run whose config
cannot be resolved as ``will fail``) and the ones already done.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from hydra.errors import HydraException
from omegaconf import ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from graphnetz.cli.help_text import plain
from graphnetz.cli.sweep_runs import SCHEMA_1_NOTE, STATES, RunState, found_runs, task_key
from graphnetz.run_identity import short_identity


class SweepFileError(ValueError):
    """The sweep's ``multirun.yaml`` cannot be read."""


class EmptySweepError(ValueError):
    """A sweep override sweeps no value (``seed=range(0)``), so the sweep has no runs."""


def _empty_sweeps(parsed: Iterable[Any]) -> list[str]:
    """The sweep overrides among ``parsed`` that sweep no value."""
    return [
        o.input_line
        for o in parsed
        if o.is_sweep_override() and next(iter(o.sweep_string_iterator()), None) is None
    ]


def _refuse_empty(parsed: list[Any]) -> None:
    empty = _empty_sweeps(parsed)
    if empty:
        which = ", ".join(repr(o) for o in empty)
        raise EmptySweepError(
            f"the override{'s' if len(empty) > 1 else ''} {which} "
            f"sweep{'' if len(empty) > 1 else 's'} no value, so the sweep has no runs"
        )


# ------------------------------------------------------------------- the expected
#: Hydra overrides the dry run's command sets itself (``-m`` and the sweep directory).
OWN_HYDRA_OVERRIDES = ("hydra.sweep.dir=", "hydra.mode=")


def sweep_overrides(sweep: Path, given: list[str]) -> tuple[list[str], list[str]] | None:
    """The sweep's job overrides and Hydra's own (a launcher, say): ``given`` (less ``-m``),
    else those of the sweep's last launch (``multirun.yaml``), else None.
    :class:`SweepFileError` when ``multirun.yaml`` cannot be read."""
    given = [o for o in given if o not in ("-m", "--multirun")]
    if given:
        return _split_hydra(given)
    saved = sweep / "multirun.yaml"
    if not saved.is_file():
        return None
    try:
        loaded = OmegaConf.load(saved)
        task = OmegaConf.select(loaded, "hydra.overrides.task")
        hydra = OmegaConf.select(loaded, "hydra.overrides.hydra")
    except (OSError, UnicodeDecodeError, yaml.YAMLError, OmegaConfBaseException) as err:
        raise SweepFileError(f"{saved} cannot be read ({type(err).__name__}: {err})") from None
    if not isinstance(task, ListConfig):
        raise SweepFileError(f"{saved} has no hydra.overrides.task (empty or cut short?)")
    hydra = [str(o) for o in hydra] if isinstance(hydra, ListConfig) else []
    return [str(o) for o in task], [o for o in hydra if not o.startswith(OWN_HYDRA_OVERRIDES)]


def _split_hydra(overrides: list[str]) -> tuple[list[str], list[str]]:
    def hydra(o: str) -> bool:
        return o.lstrip("+~").startswith(("hydra.", "hydra/"))

    own = [o for o in overrides if hydra(o) and not o.startswith(OWN_HYDRA_OVERRIDES)]
    return [o for o in overrides if not hydra(o)], own


def expected_runs(overrides: list[str]) -> list[tuple[RunState, list[str]]]:
    """The runs ``train.py -m OVERRIDES`` launches, resolved (no data loaded), with each
    job's overrides; a job whose config cannot be resolved is expected as its failure."""
    from hydra import compose, initialize_config_dir
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from graphnetz.config_dir import CONF_DIR
    from graphnetz.training.resolve import composed_identity, resolve_run

    with initialize_config_dir(str(CONF_DIR), version_base="1.3"):
        # the config loader lists a group's options for a glob sweep (model=glob(gc*))
        parser = OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())
        first = compose(
            "config", overrides=_first_values(parser, overrides), return_hydra_config=True
        )
        params = first.hydra.sweeper.params
        params = OmegaConf.to_container(params, resolve=False) if params else {}
        arguments = [f"{k}={v}" for k, v in params.items()] + list(overrides)
        parsed = parser.parse_overrides(arguments)
        _refuse_empty(parsed)  # one an experiment's hydra.sweeper.params sets
        jobs = [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
        expected = []
        for job in jobs:
            cfg = compose("config", overrides=list(job))
            try:
                spec = resolve_run(cfg)
                state = RunState("missing", spec.task_key, spec.model, spec.seed, spec.identity)
            except Exception as err:  # the run fails with it, whatever it is (training/run.py)
                state = RunState(
                    "missing",
                    task_key(_pick(cfg, "dataset.name"), _pick(cfg, "task.type")),
                    str(_pick(cfg, "model.name")),
                    _pick(cfg, "seed"),
                    composed_identity(cfg),
                    left_fraction=0.0,  # it fails before training
                    error=f"{type(err).__name__}: {err}",
                )
            expected.append((state, list(job)))
    return expected


def _pick(cfg, key: str) -> Any:
    return OmegaConf.select(cfg, key, default=None)


def _first_values(parser, overrides: list[str]) -> list[str]:
    """One value of each sweep override (enough to compose the config once and read
    ``hydra.sweeper.params``, which an ``experiment`` sets); :class:`EmptySweepError`
    when one sweeps no value."""
    parsed = parser.parse_overrides(overrides)
    _refuse_empty(parsed)
    return [
        f"{o.get_key_element()}={next(iter(o.sweep_string_iterator()))}"
        if o.is_sweep_override()
        else o.input_line
        for o in parsed
    ]


# ------------------------------------------------------------------------ merging
def merge(found: Iterable[RunState], expected: Iterable[RunState]) -> list[RunState]:
    """One state per run: the best state of its identity among the directories found (its
    ``spent_s`` that folder's, ``all_folders_s`` the sum of all, a rerun's included), and
    ``missing`` for an expected identity found nowhere. A run found without an identity (a
    schema-1 record in a folder named by job number) is the expected run of its task,
    model and seed when exactly one is expected."""
    expected = list(expected)
    by_label: dict[tuple[str, str, str], dict[object, RunState]] = {}
    for run in expected:
        by_label.setdefault(_label(run), {})[_key(run)] = run
    best: dict[object, RunState] = {}
    spent: dict[object, float] = {}
    kept: dict[object, bool] = {}
    for run in found:
        matches = by_label.get(_label(run), {}) if run.identity is None else {}
        if len(matches) == 1:
            run = replace(run, identity=next(iter(matches.values())).identity)
        key = _key(run)
        spent[key] = spent.get(key, 0.0) + run.spent_s
        kept[key] = kept.get(key, False) or run.kept  # resume finds it in any folder
        if key not in best or _rank(run) < _rank(best[key]):
            best[key] = run
    planned = {_key(run): run for run in expected}
    for key, run in planned.items():
        best.setdefault(key, run)
    merged = []
    for key, run in best.items():
        done = kept.get(key, run.kept)
        left = 0.0 if done else run.left_fraction
        run = replace(run, all_folders_s=spent.get(key, 0.0), kept=done, left_fraction=left)
        if key in planned:  # named as planned (a record cut short no longer says)
            named = planned[key]
            run = replace(run, task=named.task, model=named.model, seed=named.seed)
        merged.append(run)
    return merged


def _rank(run: RunState) -> tuple[int, bool]:
    """Which of one run's folders speaks for it: the best state, and on a tie the one
    resume finds (a schema-1 record's rerun over the record)."""
    return STATES.index(run.state), not run.kept


def _key(run: RunState) -> object:
    """The short identity (all a directory name carries); a run without one its own key."""
    return short_identity(run.identity) if run.identity else ("no identity", run.where)


def _label(run: RunState) -> tuple[str, str, str]:
    return run.task, run.model, str(run.seed)


# ------------------------------------------------------------------------ report
def cell_table(runs: list[RunState], with_missing: bool) -> list[str]:
    """Per (task, model) the count of each state, time spent (all folders) and estimated
    left (from the time per finished run: the folder speaking for it, not its reruns)."""
    cells: dict[tuple[str, str], list[RunState]] = {}
    for run in runs:
        cells.setdefault((run.task, run.model), []).append(run)
    ok_times = [r.spent_s for r in runs if r.state == "ok" and r.spent_s > 0]
    overall = sum(ok_times) / len(ok_times) if ok_times else math.nan
    shown = [s for s in STATES if with_missing or s != "missing"]
    header = ["task", "model", *(s.replace(" ", "-") for s in shown), "spent", "left(est.)"]
    rows = []
    for (task, model), members in cells.items():
        times = [r.spent_s for r in members if r.state == "ok" and r.spent_s > 0]
        per_run = sum(times) / len(times) if times else overall
        left = sum(r.left_fraction for r in members if not r.kept)
        rows.append(
            [
                task,
                model,
                *(str(sum(r.state == s for r in members)) for s in shown),
                duration(sum(r.total_s for r in members)),
                duration(left * per_run) if left else "0s",
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    return [
        "  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
        for line in [header, *rows]
    ]


def duration(seconds: float) -> str:
    if math.isnan(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}min"
    return f"{seconds / 3600:.1f}h"


def render(
    sweep: Path,
    launch: tuple[list[str], list[str]] | None,
    unknown: str = "no overrides and no multirun.yaml",
) -> str:
    """The report; ``launch`` is :func:`sweep_overrides`' answer, ``unknown`` why there is
    none."""
    found = found_runs(sweep)
    expected = expected_runs(launch[0]) if launch is not None else []
    runs = merge(found, [state for state, _ in expected])
    lines = [f"sweep {sweep}: {len(runs)} runs"]
    if not sweep.exists():
        lines.append("(not launched yet: the folder does not exist, its first launch makes it)")
    if launch is None:
        lines.append(f"({unknown}: missing runs are not known)")
    lines += ["", *cell_table(runs, with_missing=launch is not None)]
    bad = [r for r in runs if r.state in ("failed", "diverged", "unreadable")]
    if bad:
        lines += ["", "failed, diverged and unreadable:"]
        lines += [
            f"  [{r.state}] {r.task} {r.model} seed={r.seed}: "
            f"{r.error or 'no reason given'}  ({r.where})"
            for r in bad
        ]
    old = sum(r.note == SCHEMA_1_NOTE for r in runs)
    if old:
        lines += [
            "",
            f"{old} run(s) have a schema-1 record (no identity): analyze.py reads them, "
            "but resume=true cannot match them to a run and runs them again",
        ]
    if launch is not None:
        lines += ["", *dry_run(sweep, runs, expected, *launch)]
    return "\n".join(lines)


def resume_command(sweep: Path, overrides: list[str], hydra: list[str] = ()) -> str:
    """The shell command that resumes the sweep in ``sweep`` (each argument quoted)."""
    job = [o for o in overrides if not o.lstrip("+").startswith("resume=")]
    arguments = [*job, "resume=true", *hydra, f"hydra.sweep.dir={_hydra_value(str(sweep))}"]
    return " ".join(["python train.py -m", *map(shlex.quote, arguments)])


def _hydra_value(text: str) -> str:
    """``text`` as the value of a Hydra override: as it is where Hydra reads it back as
    it is, else quoted (a path with a comma, a parenthesis or an accent)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_override(f"key={text}")
        if not parsed.is_sweep_override() and parsed.value() == text:
            return text
    except HydraException:
        pass
    escaped = text.replace('"', '\\"')  # Hydra keeps a backslash before anything else
    return f'"{escaped}"'


def dry_run(
    sweep: Path,
    runs: list[RunState],
    expected: list[tuple[RunState, list[str]]],
    overrides: list[str],
    hydra: list[str] = (),
) -> list[str]:
    """What ``train.py -m OVERRIDES resume=true`` into this sweep directory would do."""
    merged = {_key(r): r for r in runs}

    def found(planned: RunState) -> RunState:
        return merged.get(_key(planned), planned)

    done = [(r, job) for r, job in expected if found(r).kept]
    todo = [(r, job) for r, job in expected if not found(r).kept]
    lines = [
        f"dry run of `{resume_command(sweep, overrides, hydra)}`: {len(expected)} runs, "
        f"{len(done)} already done, {len(todo)} to run",
    ]
    for planned, _ in done:
        run = found(planned)
        if run.state not in ("ok", "skipped", "diverged"):  # e.g. an ok record with a NaN
            lines.append(
                f"  keep [{run.state}] {planned.task} {planned.model} seed={planned.seed}: "
                f"{run.error} (its record is finished: resume=true does not run it again)"
            )
    for planned, job in todo:
        run = found(planned)
        why = ", ".join(x for x in (run.state, run.note) if x)
        if planned.error:  # its config cannot be resolved: the run fails at once
            if run.state == "missing":
                why = f"will fail: {planned.error}"
            else:  # a failed record already says why
                why += (
                    ", will fail again"
                    if run.state == "failed"
                    else f", will fail: {planned.error}"
                )
        arguments = " ".join(map(shlex.quote, job))
        lines.append(
            f"  run  [{why}] {planned.task} {planned.model} seed={planned.seed}: {arguments}"
        )
    return lines


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz status",
        description=plain(__doc__.split("\n\n")[0]),
        epilog=(
            "examples:\n"
            "  python -m graphnetz status outputs/multirun/s            # the last launch's "
            "overrides\n"
            "  python -m graphnetz status outputs/multirun/s model=gcn,gat dataset=cora "
            "seed='range(10)'   # dry run of these\n\n"
            "a sweep not launched yet (no folder) is dry-run from the overrides given; "
            "see docs/sweeps.md"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sweep", metavar="SWEEP_DIR", help="a sweep's hydra.sweep.dir")
    overrides = parser.add_argument(
        "overrides",
        nargs=argparse.REMAINDER,
        metavar="OVERRIDES",
        help="the sweep's overrides, as given to train.py -m (default: its multirun.yaml)",
    )
    overrides.required = False  # argparse counts a REMAINDER positional as required
    return parser


def brief(err: Exception) -> str:
    """An override error in one line: its type, its first line and, for a missing config
    group option, the group's options (Hydra lists them one per line, then its search
    path)."""
    lines = str(err).splitlines()
    text = f"{type(err).__name__}: {lines[0] if lines else ''}"
    for i, line in enumerate(lines):
        if line.startswith("Available options in "):
            options = []
            for option in lines[i + 1 :]:
                if not option.startswith(("\t", " ")):
                    break
                options.append(option.strip())
            text += f"; {line[0].lower()}{line[1:]} {', '.join(options)}"
            break
    return text


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    sweep = Path(args.sweep)
    given = [o for o in args.overrides if o not in ("-m", "--multirun")]
    if sweep.exists() and not sweep.is_dir():
        parser.exit(2, f"error: sweep directory {str(sweep)!r} is a file, not a folder\n")
    if not sweep.exists() and not given:  # with overrides: the dry run of a sweep to come
        parser.exit(
            2,
            f"error: sweep directory {str(sweep)!r} does not exist (its first launch, "
            f"python train.py -m ... hydra.sweep.dir={shlex.quote(str(sweep))}, creates it); "
            "to dry-run a sweep not launched yet, give its overrides: "
            f"python -m graphnetz status {shlex.quote(str(sweep))} OVERRIDES ...\n",
        )
    saved = sweep / "multirun.yaml"
    unknown = "no overrides and no multirun.yaml"
    try:
        launch = sweep_overrides(sweep, args.overrides)
    except SweepFileError as err:
        print(f"warning: {err}; showing the runs found", file=sys.stderr)
        launch, unknown = None, f"no overrides and {saved} unreadable"
    try:
        text = render(sweep, launch, unknown)
    except EmptySweepError as err:
        if given:
            parser.exit(2, f"error: {err}\n")
        print(f"warning: {saved}: {err}; showing the runs found", file=sys.stderr)
        text = render(sweep, None, f"{saved} sweeps no runs")
    except (HydraException, OmegaConfBaseException) as err:  # a bad override: say which
        if given:
            parser.exit(2, f"error: {brief(err)}\n")
        # a launch that failed before training (a mistyped option) still rewrote it
        print(
            f"warning: {saved} asks for a run that cannot be composed ({brief(err)}); "
            "showing the runs found (give the sweep's overrides for its dry run)",
            file=sys.stderr,
        )
        text = render(sweep, None, f"no overrides and {saved} cannot be composed")
    print(text)
    return 0
