"""The speed scripts' arithmetic (benchmarks/*.py), checked without timing anything."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import ml_real_cost  # noqa: E402


def _record(model: str, epochs: int, wall: float, status: str = "ok") -> dict:
    return {"model": model, "dataset": "pcg", "epochs_run": epochs, "wall_time_s": wall,
            "status": status}  # fmt: skip


def test_ml_real_cost_leaves_out_the_warm_up_runs_and_splits_fixed_from_per_epoch():
    # The warm-up run (1 epoch, 5 s: it loaded the dataset) would make E1 = 2 look slow.
    records = [_record("gcn", 1, 5.0), _record("gcn", 2, 3.0), _record("gcn", 12, 8.0)]
    costs = ml_real_cost._per_cell_costs(ml_real_cost._timed(records), (2, 12))
    # by hand: (8 - 3) / (12 - 2) = 0.5 s per epoch; 3 - 2 * 0.5 = 2 s fixed
    assert costs[("gcn", "pcg")]["per_epoch_s"] == pytest.approx(0.5)
    assert costs[("gcn", "pcg")]["fixed_s"] == pytest.approx(2.0)


def test_ml_real_cost_keeps_a_failed_warm_up_so_that_it_fails_the_cell():
    records = [_record("gcn", 0, 1.0, status="failed"), _record("gcn", 2, 3.0)]
    with pytest.raises(SystemExit, match="gcn on pcg: run failed"):
        ml_real_cost._per_cell_costs(ml_real_cost._timed(records), (2, 12))


def test_karate_job_counts_warning_lines_in_any_case_once_each():
    import karate_job

    log = "\n".join(
        [
            "[2026-01-01 10:00:00][HYDRA] Launching 10 jobs locally",
            "[2026-01-01 10:00:01][graphnetz][WARNING] - cora: no validation split",
            "/x/lightning/trainer.py:12: PossibleUserWarning: The dataloader has few workers",
            "  warnings.warn(",  # the source line under Python's warning: the same warning
            "/x/y.py:3: UserWarning: TypedStorage is deprecated",
            "  rank_zero_warn(",
            "warning: a lower-case one",
            "0 runs failed; no warnings",
        ]
    )
    assert karate_job.warning_lines(log) == [
        "[2026-01-01 10:00:01][graphnetz][WARNING] - cora: no validation split",
        "/x/lightning/trainer.py:12: PossibleUserWarning: The dataloader has few workers",
        "/x/y.py:3: UserWarning: TypedStorage is deprecated",
        "warning: a lower-case one",
    ]
