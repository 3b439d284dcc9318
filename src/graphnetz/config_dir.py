"""Where the Hydra configs are: the one place every entry point asks.

The repository's top-level ``conf/`` is also shipped inside the installed package as
``graphnetz.conf`` (pyproject.toml maps that package to ``conf/``), so a wheel carries
the configs and Hydra can read them as ``pkg://graphnetz.conf`` too.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CONF_PACKAGE = "graphnetz.conf"


def _locate() -> Path:
    """The ``conf/`` next to this source tree when it is a checkout, else ``graphnetz.conf``.

    The checkout comes first: its ``src`` run through ``PYTHONPATH=src`` (where
    ``graphnetz.conf`` is not importable) reads its own configs, git-ignored ``conf/local/``
    included, even when another checkout is the one installed. A wheel has no such
    sibling and uses the configs shipped in the package.
    """
    checkout = Path(__file__).resolve().parents[2] / "conf"
    if (checkout / "config.yaml").is_file():
        return checkout
    try:
        shipped = Path(str(resources.files(CONF_PACKAGE)))
    except ModuleNotFoundError:
        shipped = checkout
    if not (shipped / "config.yaml").is_file():
        raise FileNotFoundError(
            f"no Hydra configs: neither {checkout} nor the {CONF_PACKAGE!r} package has a "
            "config.yaml (a source tree without its conf/, or a broken install)"
        )
    return shipped


CONF_DIR = _locate()
