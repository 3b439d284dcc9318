"""The seed advisor's log axis is labelled in plain numbers, not in literal mathtext (the
figures are drawn with ``text.parse_math`` off, so ``$...$`` would be printed as written)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from graphnetz.report.figures import seed_advisor


def tick_texts(diff_stds: list[float]) -> list[str]:
    pairs = pd.DataFrame(
        {"task": [f"t{i}" for i in range(len(diff_stds))], "diff_std": diff_stds, "n_common": 3}
    )
    with plt.rc_context({"text.parse_math": False}):  # as write_figures draws them
        fig = seed_advisor(pairs, alpha=0.05)
        fig.canvas.draw()
        texts = [t.get_text() for t in fig.axes[0].yaxis.get_ticklabels(which="both")]
    plt.close(fig)
    return [t for t in texts if t]


@pytest.mark.parametrize("diff_stds", [[0.05, 3.0], [0.02], [400.0]], ids=["wide", "0.02", "400"])
def test_the_seed_advisor_labels_its_log_axis_in_plain_numbers(diff_stds):
    texts = tick_texts(diff_stds)
    assert len(texts) >= 2
    assert not [t for t in texts if "$" in t or "mathdefault" in t]
    assert all(float(t) > 0 for t in texts)  # each label reads as the number it marks


def test_decades_read_as_1_10_100():
    assert {"1", "10", "100"} <= set(tick_texts([0.05, 30.0]))
