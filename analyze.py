"""Thin entry point: ``python analyze.py DIR [DIR ...]`` (see graphnetz.cli.analyze)."""

from graphnetz.cli.analyze import main
from graphnetz.cli.quick_exit import exit_after

exit_after(main, __file__, status_from_result=True)
