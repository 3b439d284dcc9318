"""Former home of the Datasets section, kept for callers of its two functions.

The section is now part of the report's analysis (:mod:`graphnetz.report.datasets`, from
the run records' ``dataset_facts``) and rendered inside ``report.md``. These functions
take raw run records instead and, for records without facts, reload data through
:mod:`graphnetz.cli.legacy_facts`; no other module of ``graphnetz.report`` imports this
one, so importing the package loads no data code.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def dataset_section(
    records: Iterable[Mapping[str, Any]],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
    heading: str = "## Datasets",
) -> str:
    """Markdown Datasets section of the ``ml_node_cls`` records ("" when there are none)."""
    from graphnetz.cli.legacy_facts import legacy_dataset_section

    return legacy_dataset_section(records, data_dir, mirror, heading)


def dataset_section_from_run_dirs(
    paths: Iterable[str | Path],
    data_dir: str | Path | None = None,
    mirror: str | Path | None = None,
) -> str:
    """:func:`dataset_section` over every readable ``result.json`` under ``paths``."""
    from graphnetz.cli.legacy_facts import legacy_dataset_section_from_run_dirs

    return legacy_dataset_section_from_run_dirs(paths, data_dir, mirror)
