"""analyze.py's options do what they say: --metric, --out, DIRs or --from-csv (exactly one),
a missing DIR, and --ci / --alpha / --bootstrap-seed changing the intervals printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from graphnetz.cli.analyze import main

ROOT = Path(__file__).resolve().parents[1]
# one task, one model, ten seeds; validation accuracy is 0.1 above the test accuracy
TEST_ACC = [0.701, 0.743, 0.782, 0.804, 0.829, 0.765, 0.712, 0.798, 0.751, 0.737]


def write_sweep(root: Path) -> Path:
    for seed, acc in enumerate(TEST_ACC):
        run = root / str(seed)
        run.mkdir(parents=True)
        record = {
            "schema_version": 1,
            "status": "ok",
            "task": "cora/node_cls",
            "model": "gcn",
            "seed": seed,
            "primary_metric": "accuracy",
            "direction": "max",
            "metrics": {"val": {"accuracy": acc + 0.1}, "test": {"accuracy": acc}},
        }
        (run / "result.json").write_text(json.dumps(record))
    return root


def printed_row(text: str) -> dict[str, float]:
    """The summary row analyze.py prints: task model n mean ±h low high."""
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["task", "model"])
    cells = lines[header + 1].split()
    assert cells[:2] == ["cora/node_cls", "gcn"]
    return dict(zip(["n", "mean", "h", "low", "high"], map(float, cells[2:7]), strict=True))


def run_main(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_default_metric_is_the_primary_test_metric(tmp_path, capsys):
    code, out, _ = run_main(capsys, write_sweep(tmp_path / "sweep"), "--out", tmp_path / "r")
    assert code == 0
    assert printed_row(out)["mean"] == pytest.approx(np.mean(TEST_ACC), abs=5e-5)


def test_metric_selects_another_split(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep")
    code, out, _ = run_main(capsys, sweep, "--metric", "val:accuracy", "--out", tmp_path / "r")
    assert code == 0
    assert printed_row(out)["mean"] == pytest.approx(np.mean(TEST_ACC) + 0.1, abs=5e-5)


def test_an_unknown_metric_is_refused_with_the_available_ones(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep")
    code, _, err = run_main(capsys, sweep, "--metric", "f1", "--out", tmp_path / "r")
    assert code == 2
    assert "'f1'" in err and "'accuracy'" in err and "'val:accuracy'" in err


def test_out_chooses_where_the_report_goes(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep")
    code, out, _ = run_main(capsys, sweep, "--out", tmp_path / "elsewhere")
    assert code == 0
    assert (tmp_path / "elsewhere" / "report.md").is_file()
    assert not (sweep / "report").exists()
    assert str(tmp_path / "elsewhere") in out


def test_without_out_the_report_goes_into_the_first_dir(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep")
    assert run_main(capsys, sweep)[0] == 0
    assert (sweep / "report" / "report.md").is_file()


def test_from_csv_reads_the_long_table(tmp_path, capsys):
    csv = tmp_path / "results.csv"
    rows = [f"cora/node_cls,gcn,{s},accuracy,{v}" for s, v in enumerate(TEST_ACC)]
    csv.write_text("task,model,seed,metric,value\n" + "\n".join(rows) + "\n")
    code, out, _ = run_main(capsys, "--from-csv", csv)
    assert code == 0
    assert printed_row(out)["mean"] == pytest.approx(np.mean(TEST_ACC), abs=5e-5)
    assert (tmp_path / "report" / "report.md").is_file()  # next to the CSV by default


@pytest.mark.parametrize("both", [True, False])
def test_dirs_and_from_csv_are_exclusive_and_one_is_required(tmp_path, capsys, both):
    argv = [str(write_sweep(tmp_path / "sweep")), "--from-csv", "x.csv"] if both else []
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "either one or more DIRs or --from-csv" in capsys.readouterr().err


def test_a_missing_dir_exits_2_and_names_it(tmp_path):
    missing = tmp_path / "no_such_sweep"
    res = subprocess.run(
        [sys.executable, str(ROOT / "analyze.py"), str(missing), "--out", str(tmp_path / "r")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2
    assert str(missing) in res.stderr
    assert not (tmp_path / "r").exists()


def test_a_missing_csv_exits_2_and_names_it(tmp_path, capsys):
    missing = tmp_path / "no_such.csv"
    code, _, err = run_main(capsys, "--from-csv", missing)
    assert code == 2
    assert str(missing) in err


# --- the interval options ------------------------------------------------------------------


def interval(tmp_path, capsys, *options) -> dict[str, float]:
    sweep = tmp_path / "sweep"
    if not sweep.exists():
        write_sweep(sweep)
    code, out, _ = run_main(capsys, sweep, "--out", tmp_path / "r", *options)
    assert code == 0
    return printed_row(out)


def t_half_width(alpha: float) -> float:
    x = np.array(TEST_ACC)
    return stats.t.ppf(1 - alpha / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)


def test_default_interval_is_students_t_at_95_percent(tmp_path, capsys):
    row = interval(tmp_path, capsys)
    assert row["h"] == pytest.approx(t_half_width(0.05), abs=5e-5)


def test_alpha_010_prints_the_90_percent_t_interval(tmp_path, capsys):
    row = interval(tmp_path, capsys, "--alpha", "0.1")
    assert row["h"] == pytest.approx(t_half_width(0.10), abs=5e-5)
    assert row["h"] < t_half_width(0.05) - 1e-3


def test_ci_bootstrap_prints_the_percentile_bootstrap_interval(tmp_path, capsys):
    row = interval(tmp_path, capsys, "--ci", "bootstrap")
    x = np.array(TEST_ACC)
    reference = stats.bootstrap(
        (x,), np.mean, method="percentile", n_resamples=10_000, random_state=1
    ).confidence_interval
    # different random streams: agreement to Monte Carlo error, not digit for digit
    assert row["low"] == pytest.approx(reference.low, abs=3e-3)
    assert row["high"] == pytest.approx(reference.high, abs=3e-3)
    assert abs(row["h"] - t_half_width(0.05)) > 3e-3  # not the t interval (0.0295 here)


def test_bootstrap_seed_changes_the_resampling(tmp_path, capsys):
    seed0 = interval(tmp_path, capsys, "--ci", "bootstrap")
    seed5 = interval(tmp_path, capsys, "--ci", "bootstrap", "--bootstrap-seed", "5")
    again = interval(tmp_path, capsys, "--ci", "bootstrap", "--bootstrap-seed", "5")
    assert (seed5["low"], seed5["high"]) != (seed0["low"], seed0["high"])
    assert seed5 == again


def test_bootstrap_alpha_010_narrows_the_bootstrap_interval(tmp_path, capsys):
    wide = interval(tmp_path, capsys, "--ci", "bootstrap")
    narrow = interval(tmp_path, capsys, "--ci", "bootstrap", "--alpha", "0.1")
    assert narrow["low"] > wide["low"] and narrow["high"] < wide["high"]


@pytest.mark.parametrize("bad", ["0", "1", "-0.2", "abc"])
def test_alpha_outside_the_unit_interval_is_refused(tmp_path, capsys, bad):
    with pytest.raises(SystemExit) as exit_info:
        main([str(write_sweep(tmp_path / "sweep")), "--alpha", bad])
    assert exit_info.value.code == 2
    assert f"invalid alpha {bad!r}" in capsys.readouterr().err


def test_a_negative_bootstrap_seed_is_refused_before_reading(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(write_sweep(tmp_path / "s")), "--bootstrap-seed", "-1"])
    assert exc.value.code == 2
    assert "invalid seed '-1'" in capsys.readouterr().err


def test_an_out_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "taken").write_text("x")
    with pytest.raises(SystemExit):
        main([str(write_sweep(tmp_path / "s")), "--out", str(tmp_path / "taken")])
    assert "is a file, not a folder" in capsys.readouterr().err


def test_a_folder_given_as_csv_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--from-csv", str(write_sweep(tmp_path / "s"))])
    assert "is a folder; give it as DIR" in capsys.readouterr().err


def test_a_record_file_given_as_dir_puts_the_report_beside_it(tmp_path, capsys):
    record = write_sweep(tmp_path / "s") / "0" / "result.json"
    code, _, _ = run_main(capsys, str(record))
    assert code == 0 and (record.parent / "report" / "report.md").is_file()


def test_an_alpha_above_the_seed_advisors_power_still_writes_the_report(tmp_path, capsys):
    lines = ["task,model,seed,metric,value"]
    lines += [
        f"t,{m},{s},accuracy,{v + 0.013 * s * (m == 'a')}"
        for s in range(3)
        for m, v in [("a", 0.8), ("b", 0.7)]
    ]
    (tmp_path / "r.csv").write_text("\n".join(lines) + "\n")
    code, _, err = run_main(capsys, "--from-csv", tmp_path / "r.csv", "--alpha", "0.9")
    assert code == 0, err
    assert (tmp_path / "report" / "figures" / "seed_advisor.png").is_file()
