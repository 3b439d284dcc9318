"""``python -m graphnetz``: one entry point that names every command, and ``list``'s
filters and its output into a pipe that closes early."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from graphnetz.__main__ import main
from graphnetz.task_types import TASK_TYPES

COMMANDS = ("list", "status", "records", "tune")


def test_the_help_names_every_command_with_what_it_does(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert re.search(rf"^  {command}\s+\S.+$", out, re.MULTILINE), out


@pytest.mark.parametrize(
    "argv, named", [(["lst"], "unknown command 'lst' (did you mean 'list'?)"), ([], "required")]
)
def test_a_bad_or_missing_command_is_named_with_the_valid_ones(capsys, argv, named):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and named in err
    assert "list, status, records, tune" in err


def test_list_models_refuses_an_unknown_task_type_naming_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["list", "models", "--task", "bogus"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"unknown task type 'bogus'; valid: {list(TASK_TYPES)}" in err


def test_list_models_shows_only_the_models_of_the_task_type(capsys):
    main(["list", "models", "--task", "graph_reg"])
    rows = [line.split(None, 3) for line in capsys.readouterr().out.splitlines()[1:]]
    names = {name for name, *_ in rows}
    # gin is a graph-level model; deepwalk embeds the nodes of one graph (ml_node_cls only)
    assert "gin" in names and "deepwalk" not in names
    assert all("graph_reg" in served for *_, served in rows)


def test_list_tasks_refuses_a_filter_it_does_not_apply(capsys):
    with pytest.raises(SystemExit):
        main(["list", "tasks", "--task", "node_cls"])
    assert "--task applies to datasets and models only" in capsys.readouterr().err


def test_a_listing_into_a_pipe_closed_early_ends_quietly():
    reader_gone = subprocess.Popen(
        [sys.executable, "-m", "graphnetz", "list", "datasets"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    reader_gone.stdout.close()  # before the listing is written: as `| head -0` does
    _, err = reader_gone.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err
    assert reader_gone.returncode == 0
