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
    "Chance level of the primary metric: the test macro AP of a constant score (each "
    "label's AP is then its positive rate in the test split), mean over the splits of the "
    "runs' seeds. A method near it learned nothing about the labels."
)


def datasets_markdown(section: DatasetSection, heading: str = "## Datasets") -> str:
    """Statistics table, chance-level table and notes; "" when the section is empty.

    Columns of the statistics table follow ``graphnetz.analysis.STAT_COLUMNS``.
    """
    if section.empty:
        return ""
    # graphnetz.analysis imports torch: only a report with a Datasets section pays for it
    from graphnetz.analysis import statistics_table, table_markdown

    lines = [heading, "", INTRO, ""]
    if section.rows:
        lines.append(table_markdown(statistics_table(list(section.rows))))
    if section.chance:
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
