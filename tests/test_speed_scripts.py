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


# A path 0-1-2 (4 directed edges, 3 nodes), 5 stored input entries, widths 6 -> 2 -> 1.
# Per layer (by hand): linear = 2 x entries x d_out x maps, aggregation = 2 x A x d_out.
#   GCN  (A = 7): L0 fwd 20 + 28, bwd 20 + 28; L1 fwd 12 + 14, bwd 24 + 14 -> 2 x 74 + 86
#   SAGE (A = 4, two maps): L0 fwd 40 + 16, bwd 40 + 16; L1 fwd 24 + 8, bwd 48 + 8
#   GAT  (A = 7, attention): as GCN forward; bwd 20 + 2 x 28 and 24 + 2 x 14
#   GT   (A = 4, four maps, q.k = 2 x 4 x d_out): L0 fwd 80 + 16 + 16, bwd 80 + 32 + 32;
#        L1 fwd 48 + 8 + 8, bwd 96 + 16 + 16
#   MLP: L0 fwd 20, bwd 20; L1 fwd 12, bwd 24
@pytest.mark.parametrize(
    "model, expected",
    [("gcn", 2 * 74 + 86), ("sage", 2 * 88 + 112), ("gat", 2 * 74 + 128),
     ("gt", 2 * 176 + 272), ("mlp", 2 * 32 + 44)],
)  # fmt: skip
def test_flops_counts_each_models_products_by_hand(model, expected):
    import flops

    assert flops.epoch_flops(model, nodes=3, edges=4, in_nnz=5, dims=[6, 2, 1]) == expected


def test_flops_floor_on_cora_is_the_hand_count():
    """Cora: 2708 nodes, 10556 edges, 49216 stored features, 1433 -> 64 -> 7 (by hand:
    GCN 34.25 MFLOP; SAGE, mean over edges only, 61.71 MFLOP)."""
    import flops

    cora = {"nodes": 2708, "edges": 10556, "in_nnz": 49216, "dims": [1433, 64, 7]}
    assert flops.epoch_flops("gcn", **cora) == 34_254_880
    assert flops.epoch_flops("sage", **cora) == 61_705_688


def test_flops_names_the_models_it_can_count():
    import flops

    with pytest.raises(ValueError, match=r"no FLOP model for 'gin'; valid: \['gat', 'gcn'"):
        flops.epoch_flops("gin", nodes=3, edges=4, in_nnz=5, dims=[6, 2, 1])
