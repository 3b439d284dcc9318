"""``graphnetz.cli.quick_exit``: the commands end without the interpreter's teardown, yet
with the same exit status, every atexit handler, logging file and non-daemon thread done,
and never under a profiler or when imported by another program."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphnetz.cli.quick_exit import exit_status

ROOT = Path(__file__).resolve().parents[1]

#: A command whose main leaves traces of everything a normal exit finishes, and an object
#: whose destructor runs only in the interpreter's teardown (of the module's globals).
COMMAND = """
import atexit, logging, sys, threading, time
from pathlib import Path
from graphnetz.cli.quick_exit import exit_after

out = Path(sys.argv[1])
class Teardown:
    def __del__(self):
        (out / "teardown").write_text("ran")
KEPT = Teardown()

def slow_thread():
    time.sleep(0.3)
    (out / "thread").write_text("done")

def main():
    atexit.register(lambda: (out / "atexit").write_text("ran"))
    handler = logging.FileHandler(out / "log.txt")
    logging.getLogger("t").addHandler(handler)
    logging.getLogger("t").warning("the last line")
    threading.Thread(target=slow_thread).start()
    print("printed", end="")
    {ending}

if __name__ == "__main__":
    exit_after(main, __file__, status_from_result={from_result})
"""


def _run(tmp_path: Path, ending: str, from_result: bool = False, prefix=()):
    script = tmp_path / "command.py"
    script.write_text(textwrap.dedent(COMMAND).format(ending=ending, from_result=from_result))
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(
        [sys.executable, *prefix, str(script), str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    return done, out


@pytest.mark.parametrize(
    ("ending", "from_result", "status", "stderr"),
    [
        ("return 7.5", False, 0, ""),  # a command's result is not its status
        ("sys.exit(3)", False, 3, ""),
        ("sys.exit('bad value')", False, 1, "bad value"),
        ("return 2", True, 2, ""),
        ("return None", True, 0, ""),
    ],
)
def test_same_status_and_everything_finished_but_no_teardown(
    tmp_path, ending, from_result, status, stderr
):
    done, out = _run(tmp_path, ending, from_result)
    assert done.returncode == status, done.stderr
    assert done.stdout == "printed"
    assert stderr in done.stderr
    assert (out / "atexit").read_text() == "ran"
    assert (out / "thread").read_text() == "done"  # joined, as at a normal exit
    assert (out / "log.txt").read_text() == "the last line\n"
    assert not (out / "teardown").exists()  # the module teardown was skipped


def test_under_a_profiler_the_process_ends_normally(tmp_path):
    profile = tmp_path / "run.prof"
    done, out = _run(tmp_path, "return None", prefix=("-m", "cProfile", "-o", str(profile)))
    assert done.returncode == 0, done.stderr
    assert profile.exists()  # written after the script: the process was not cut short
    assert (out / "teardown").exists()


def test_errors_propagate_with_their_traceback(tmp_path):
    done, out = _run(tmp_path, "raise ValueError('boom')")
    assert done.returncode == 1
    assert "ValueError: boom" in done.stderr
    assert (out / "atexit").exists()


def test_a_program_that_imports_a_command_gets_its_process_back(tmp_path):
    caller = tmp_path / "caller.py"
    caller.write_text(
        "from graphnetz.cli.quick_exit import exit_after\n"
        "print(exit_after(lambda: 5, 'elsewhere.py'))\n"
        "try:\n"
        "    exit_after(lambda: 4, 'elsewhere.py', status_from_result=True)\n"
        "except SystemExit as stop:\n"
        "    print('status', stop.code)\n"
    )
    done = subprocess.run([sys.executable, str(caller)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["5", "status 4"]


def test_exit_status_is_the_interpreters():
    assert [exit_status(c) for c in (None, 0, 4, True, False)] == [0, 0, 4, 1, 0]
    assert exit_status("message") == 1


def test_the_commands_use_it():
    for script, call in [
        ("train.py", "exit_after(main, __file__)"),
        ("analyze.py", "exit_after(main, __file__, status_from_result=True)"),
    ]:
        assert call in (ROOT / script).read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    for entry in ("cli.train:cli", "cli.analyze:cli", "tune.__main__:cli"):
        assert entry in pyproject
