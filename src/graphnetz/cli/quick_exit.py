"""End a command-line process without the interpreter's teardown of its modules.

Once torch, Lightning and PyG are imported, the interpreter's final teardown (freeing
every module, running the last garbage collections) takes about a second here after the
work is done: 1.0-1.5 s of each ``python train.py`` and 0.3 s of each ``analyze.py``.
:func:`exit_after` runs a command's ``main``, then shuts down the way the interpreter
does up to that teardown (it joins non-daemon threads and runs the thread-exit hooks,
then every ``atexit`` handler, which flushes and closes logging's files and runs
pending ``weakref.finalize`` clean-ups, then flushes stdout/stderr) and leaves with
``os._exit``. Exit statuses are those of a normal exit.

Exceptions other than ``SystemExit`` propagate (traceback and teardown as usual). Under
a tracer or profiler (``python -m cProfile``, ``pdb``, ``coverage``), with ``python -i``,
or when the command was not the program Python started (an import, a test), ``main`` is
simply returned from, so whoever runs it gets the process back.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from typing import Any


def exit_status(code: Any) -> int:
    """What ``SystemExit(code)`` exits with: None -> 0, an int (or bool) -> itself, else
    1, with the value printed to stderr, as the interpreter does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code)
    print(code, file=sys.stderr)
    return 1


def _is_started_program(script: str) -> bool:
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    return (
        main_file is not None
        and os.path.realpath(main_file) == os.path.realpath(script)
        and not sys.flags.interactive
        and sys.gettrace() is None
        and sys.getprofile() is None
    )


def _shut_down(status: int) -> None:
    shutdown_threads = getattr(threading, "_shutdown", None)
    if shutdown_threads is not None:  # what Py_FinalizeEx does first (CPython 3.10-3.13)
        shutdown_threads()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):  # closed or replaced stream
            pass
    os._exit(status)


def exit_after(main: Callable[[], Any], script: str, status_from_result: bool = False) -> Any:
    """Run ``main()``; if ``script`` (the caller's ``__file__``) is the program Python
    started, exit without teardown, with the status of ``SystemExit`` or, when
    ``status_from_result``, of ``main``'s return value (an exit code); else return it."""
    if not _is_started_program(script):
        result = main()
        if status_from_result:
            raise SystemExit(result)
        return result
    try:
        result = main()
    except SystemExit as stop:
        _shut_down(exit_status(stop.code))
    _shut_down(exit_status(result) if status_from_result else 0)
