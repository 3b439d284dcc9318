"""Module docstrings as ``--help`` prints them."""

from __future__ import annotations

import re


def plain(doc: str) -> str:
    """A reStructuredText docstring as --help prints it: ``code`` and :mod:`name` bare."""
    return re.sub(r":\w+:`([^`]+)`", r"\1", doc).replace("``", "")
