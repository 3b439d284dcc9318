"""The Datasets section of ``report.md``: a function of the :class:`DatasetSection`."""

from __future__ import annotations

import pandas as pd

from .analysis import DatasetSection

INTRO = (
    "Multi-label datasets of this sweep: edges are undirected pairs; label homophily is the "
    "mean Jaccard similarity of the label sets at the ends of an edge; labels_* are "
    "statistics of labels per node."
)
CHANCE_INTRO = (
    "Chance level of test macro AP (the primary metric) only, not of any other metric or "
    "split: the test macro AP of a constant score (each label's AP is then its positive "
    "rate in the test split), mean over the splits of the runs' seeds. A method whose test "
    "macro AP is near it learned nothing about the labels."
)


def _chance_applies(chance: dict, metric: str | None) -> bool:
    """Whether ``chance`` is the chance level of the analysed ``metric`` (None: the
    primary metric on test, which the chance level is computed for)."""
    return metric is None or metric in (chance["metric"], f"{chance['split']}:{chance['metric']}")


def chance_omitted(section: DatasetSection, metric: str) -> str:
    """The note that replaces the chance-level table when ``metric`` is not its metric."""
    measured = sorted({f"{c['split']} {c['metric']}" for c in section.chance})
    return (
        f"Chance level not shown: it is defined for {', '.join(measured)} (the primary "
        f"metric on test), not for the analysed metric {metric}."
    )


def datasets_markdown(
    section: DatasetSection, heading: str = "## Datasets", metric: str | None = None
) -> str:
    """Statistics table, chance-level table and notes; "" when the section is empty.

    Columns of the statistics table follow ``graphnetz.analysis.STAT_COLUMNS``.
    ``metric``: the analysed metric as in ``ReportSettings.metric`` (None: each task's
    primary metric). When the chance level is not of that metric, a one-line note
    replaces its table, so that it is not read as the analysed metric's chance level.
    """
    if section.empty:
        return ""
    # graphnetz.analysis imports torch: only a report with a Datasets section pays for it
    from graphnetz.analysis import statistics_table, table_markdown

    lines = [heading, "", INTRO, ""]
    if section.rows:
        lines.append(table_markdown(statistics_table(list(section.rows))))
    if section.chance and not all(_chance_applies(c, metric) for c in section.chance):
        lines += [chance_omitted(section, str(metric)), ""]
    elif section.chance:
        chance = pd.DataFrame(
            [
                (c["dataset"], ", ".join(map(str, c["seeds"])), f"{c['value']:.4f}")
                for c in section.chance
            ],
            columns=["dataset", "run seeds", "constant-score test macro AP"],
        )
        lines += [CHANCE_INTRO, "", table_markdown(chance)]
    lines += [f"- {note}" for note in section.notes]
    return "\n".join(lines).rstrip("\n") + "\n"
