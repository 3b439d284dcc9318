"""``python -m graphnetz.tune [options] <overrides of one run>``: search, then write
``+tuned=<study>`` for the seed sweep (docs/tuning.md)."""

from __future__ import annotations

import argparse
import logging
import sys

from hydra.errors import HydraException

from graphnetz.cli.quick_exit import exit_after
from graphnetz.launch import absolute_path
from graphnetz.training.resolve import ConfigError
from graphnetz.training.run import quiet_libraries
from graphnetz.tune.selected import (
    check_tuned_target,
    reused_seeds_warning,
    seed_sweep_command,
    write_tuned_config,
)
from graphnetz.tune.space import SpaceError, available_spaces, inner_seeds_arg, load_space
from graphnetz.tune.study import Search, TuneError


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m graphnetz tune",
        description="Search hyperparameters of one (task, model) on the validation metric "
        "averaged over inner seeds; resumable; writes the selected point as +tuned=<study>.",
    )
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the run (no sweeps)")
    parser.add_argument(
        "--space", default="default", help=f"search space: {available_spaces()} or a YAML path"
    )
    parser.add_argument("--budget", type=int, help="trials (default: the space's budget)")
    parser.add_argument(
        "--inner-seeds",
        type=inner_seeds_arg,
        help="comma-separated seeds each trial trains (default: the space's inner_seeds)",
    )
    parser.add_argument("--out", default="outputs/tuning", help="where studies and trial runs live")
    parser.add_argument(
        "--config-root",
        help="write <root>/tuned/<study>.yaml (default: the checkout's conf/; for another "
        "root the printed seed sweep adds hydra.searchpath=[file://<root>])",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s] %(message)s")
    quiet_libraries()
    try:
        search = Search(
            args.overrides,
            load_space(args.space),
            absolute_path(args.out),
            budget=args.budget,
            inner_seeds=args.inner_seeds,
        )
        check_tuned_target(search.name, str(search.storage_path.resolve()), args.config_root)
        warning = reused_seeds_warning(search.inner_seeds)
        if warning is not None:  # before anything trains: the search may be stopped
            print(f"warning: {warning}", file=sys.stderr)
        result = search.run()
        path = write_tuned_config(result, args.config_root)
    except (TuneError, SpaceError, ConfigError, HydraException) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(
        f"selected for {result.study}: {result.params}\n"
        f"  mean val {result.metric} = {result.value:.4f} over seeds {list(result.inner_seeds)}; "
        f"budget {result.budget} trials ({result.trials_complete} ok, "
        f"{result.trials_failed} failed); study {result.storage}\n"
        f"  config: {path}\n"
        f"  seed sweep: {seed_sweep_command(result, args.config_root)}"
    )
    if warning is not None:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def cli() -> None:
    """``graphnetz-tune``: :func:`main`, then the end of the process without teardown."""
    exit_after(main, sys.argv[0], status_from_result=True)


if __name__ == "__main__":
    exit_after(main, __file__, status_from_result=True)
