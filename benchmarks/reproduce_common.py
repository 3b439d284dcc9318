"""Shared by the ``reproduce_*.py`` scripts: published values, verdicts, rows, doc sections.

Each script measures one published table, compares every cell with the published value
(``benchmarks/reproduce/published.csv``) and rewrites only its own section of
``docs/reproduction.md``, the text between ``<!-- BEGIN name -->`` and ``<!-- END name -->``.

Verdict rule (:func:`verdict`), with d = ours − published:

* ``inside``: |d| ≤ h + u/2, where h is the half-width of our 95 % Student-t interval
  (0 for an exact, deterministic statistic) and u the published value's rounding unit
  (0.01 for "0.42", 1000 for "18K"): the published value lies in our interval, widened by
  the rounding of the published digits.
* ``explained``: outside, and the script names the cause with a number that shows it
  (e.g. the other edge convention gives the published value).
* ``open``: outside and unexplained.
* ``no published value``: the published value is not available offline (cell kept).
* ``missing``: we have no measurement yet (the script says which command fills it).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphnetz.report.records import natural_key
from graphnetz.stats import t_interval

REPO_ROOT = Path(__file__).resolve().parents[1]
PUBLISHED_CSV = Path(__file__).resolve().parent / "reproduce" / "published.csv"
DOC = REPO_ROOT / "docs" / "reproduction.md"
PUBLISHED_COLUMNS = ("paper", "table", "row", "column", "value", "half_width", "unit", "source")
NOT_AVAILABLE = "published value not available offline"
RESTORE_COMMAND = "python -m graphnetz records restore --all"
VERDICTS = ("inside", "explained", "open", "no published value", "missing")


@dataclass(frozen=True)
class Published:
    """One published cell: value, its ± half-width if printed, rounding unit and source."""

    value: float
    half_width: float | None
    unit: float
    source: str


@dataclass(frozen=True)
class Ours:
    """Our measurement: a mean with its 95 % t half-width over n runs, or an exact value."""

    mean: float
    half_width: float = 0.0
    n: int | None = None  # None: exact (deterministic) statistic

    @classmethod
    def from_values(cls, values: Iterable[float]) -> Ours:
        """Mean ± t half-width; values identical over all runs give an exact value."""
        values = np.asarray(list(values), dtype=float)
        if values.size > 1 and np.all(values == values[0]):
            return cls(float(values[0]))
        ci = t_interval(values)
        return cls(ci.mean, ci.half_width, ci.n)

    def text(self, digits: int | None = None) -> str:
        if digits is None:
            digits = 0 if float(self.mean).is_integer() or abs(self.mean) >= 1000 else 3
        if self.n is None:
            return fmt(self.mean, digits)
        if self.n < 2:
            return f"{fmt(self.mean, digits)} (n = 1, no CI)"
        return f"{fmt(self.mean, digits)} ± {fmt(self.half_width, digits)} (n = {self.n})"


@dataclass
class Cell:
    """One compared cell: its labels (the table's leading columns) and the comparison."""

    labels: tuple[str, ...]
    published: Published | None
    ours: Ours | None
    explanation: str | None = None  # why it differs, with the number that shows it
    missing_note: str = ""  # for an unmeasured cell: the command that fills it
    open_note: str = ""  # for an open cell: what was found or tried
    remark: str = ""  # said after the verdict, whatever it is (e.g. why a match is circular)

    @property
    def difference(self) -> float | None:
        if self.published is None or self.ours is None:
            return None
        return self.ours.mean - self.published.value

    @property
    def verdict(self) -> str:
        return verdict(self.published, self.ours, self.explanation)


def fmt(value: float, digits: int | None = None, sign: bool = False) -> str:
    """A number for a table with ``digits`` decimals; by default integers (and values
    ≥ 1000) without decimals and others with 3. NaN is n/a."""
    if value is None or math.isnan(value):
        return "n/a"
    if digits is None:
        digits = 0 if float(value).is_integer() or abs(value) >= 1000 else 3
    return f"{value:{'+' if sign else ''}.{digits}f}"


def unit_digits(unit: float) -> int:
    """Decimals of a published value with rounding unit ``unit`` (0.01 → 2, 1000 → 0)."""
    return max(0, -math.floor(math.log10(unit) + 1e-9))


def read_published(path: Path | str = PUBLISHED_CSV) -> dict[tuple[str, str, str, str], Published]:
    """The published values keyed by (paper, table, row, column); a bad file raises ValueError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"published-values file {path} does not exist")
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in PUBLISHED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {missing}; expected {list(PUBLISHED_COLUMNS)}"
            )
        out: dict[tuple[str, str, str, str], Published] = {}
        for line, rec in enumerate(reader, start=2):
            key = tuple(rec[c].strip() for c in PUBLISHED_COLUMNS[:4])
            if not all(key):
                raise ValueError(f"{path} line {line}: empty paper/table/row/column in {key}")
            if key in out:
                raise ValueError(f"{path} line {line}: duplicate cell {key}")
            if not rec["source"].strip():
                raise ValueError(f"{path} line {line}: cell {key} has no source note")
            out[key] = Published(
                value=_number(rec["value"], "value", path, line),
                half_width=_number(rec["half_width"], "half_width", path, line, optional=True),
                unit=_number(rec["unit"], "unit", path, line),
                source=rec["source"].strip(),
            )
    return out


def _number(text: str, column: str, path: Path, line: int, optional: bool = False):
    text = (text or "").strip()
    if not text and optional:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{path} line {line}: {column}={text!r} is not a number") from None


def verdict(published: Published | None, ours: Ours | None, explanation: str | None = None) -> str:
    """One of :data:`VERDICTS` by the rule in the module docstring."""
    if published is None:
        return "no published value"
    if ours is None or math.isnan(ours.mean):
        return "missing"
    h = ours.half_width if ours.n is not None and not math.isnan(ours.half_width) else 0.0
    if abs(ours.mean - published.value) <= h + published.unit / 2 + 1e-12:
        return "inside"
    return "explained" if explanation else "open"


def try_setting(cell: Cell, seeds: dict, what: str) -> str:
    """``what`` followed by the result of its runs (``seeds``: their values), which
    becomes the cell's explanation when it lands inside the published value."""
    alt = Ours.from_values(seeds.values())
    said = f"{what} {alt.text(4)}"
    if cell.published is not None and verdict(cell.published, alt) == "inside":
        cell.explanation = said
    return said


def _package_file(path: str) -> dict:
    """The JSON of ``benchmarks/reference_package_runs.py``; a missing or malformed file
    stops the script with a message naming it (before anything is written)."""
    file = Path(path)
    if not file.is_file():
        raise SystemExit(
            f"--reference-package {path}: no such file (the shipped one is "
            "benchmarks/reproduce/reference_package_runs.json; "
            "benchmarks/reference_package_runs.py writes it)"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise SystemExit(f"--reference-package {path} is not JSON: {err}") from None
    about = data.get("about") if isinstance(data, dict) else None
    if (
        not isinstance(about, dict)
        or "commands" not in about
        or not isinstance(data.get("cells"), dict)
    ):
        raise SystemExit(
            f"--reference-package {path} is not a file of benchmarks/reference_package_runs.py "
            "(it needs 'cells' and 'about.commands')"
        )
    return data


def read_reference_package_runs(path: str | None) -> dict[tuple[str, str], dict]:
    """``benchmarks/reference_package_runs.py``'s cells, keyed (dataset, model)."""
    if path is None:
        return {}
    out = {}
    for key, cell in _package_file(path)["cells"].items():
        dataset, _task, model = key.split("/")
        out[(dataset, model)] = cell
    return out


def package_command(path: str) -> str:
    return "; ".join(_package_file(path)["about"]["commands"])


def reference_package_note(cell: Cell, run: dict | None, ours_there: dict | None) -> None:
    """What the reference package itself gives here (``run``: its per-seed values on the
    graph our loader reads), against ours at its settings (``ours_there``).

    Its mean over all its seeds inside our interval at its settings says that the two
    implementations agree on this graph: explained, as chance in the published seeds when
    its seeds 0-9 give the published value back (the published computation, rerun), and
    otherwise as the published cell being another computation (another graph or package
    version: the numbers show what the reference gives on ours). Outside, the numbers go
    to the open note.
    """
    if not run or not ours_there or cell.explanation or cell.published is None:
        return
    values = run["values"]
    first = Ours.from_values(values[:10])
    whole = Ours.from_values(values)
    ours = Ours.from_values(ours_there.values())
    reproduced = verdict(cell.published, Ours(first.mean)) == "inside"
    said = (
        f"the reference package itself (graphnetz 0.2.0, run here on the mirror's graph, "
        f"{run['nodes']} nodes, {run['edges']} edges) gives {first.mean:.4f} at its seeds 0-9"
        + (" (the published value)" if reproduced else "")
        + f" and {whole.text(4)} over seeds 0-{len(values) - 1}; ours at its settings "
        f"{ours.text(4)}"
    )
    lower, upper = ours.mean - ours.half_width, ours.mean + ours.half_width
    if lower <= whole.mean <= upper:
        cause = (
            "chance in the published seeds"
            if reproduced
            else "the published cell is another computation than the reference's on the "
            "mirror's graph (its seeds 0-9 do not give it back)"
        )
        cell.explanation = f"{cause}: {said}, which holds its mean"
        return
    cell.open_note = f"{cell.open_note}; {said}" if cell.open_note else f"tried: {said}"


def verdict_text(cell: Cell) -> str:
    text = _verdict_words(cell)
    return f"{text}; {cell.remark}" if cell.remark else text


def _verdict_words(cell: Cell) -> str:
    v = cell.verdict
    if v == "inside":
        return "inside CI" if cell.ours.n is not None else "matches (published rounding)"
    if v == "explained":
        return f"explained: {cell.explanation}"
    if v == "no published value":
        return NOT_AVAILABLE
    if v == "missing":
        return f"missing: {cell.missing_note}" if cell.missing_note else "missing"
    return f"open: {cell.open_note}" if cell.open_note else "open"


def render_cells(cells: Sequence[Cell], label_headers: Sequence[str]) -> str:
    """A Markdown table: labels, published, ours, difference, verdict; sources as notes.

    The published value keeps its printed digits; ours and the difference get one more.
    """
    sources: list[str] = []
    lines = [
        "| " + " | ".join([*label_headers, "published", "ours", "difference", "verdict"]) + " |",
        "|" + "---|" * (len(label_headers) + 4),
    ]
    for cell in cells:
        digits = None
        if cell.published is None:
            pub = "—"
        else:
            shown = unit_digits(cell.published.unit)
            digits = shown + 1 if shown else 0
            if not shown and cell.ours is not None and cell.ours.n is None:
                digits = 0 if float(cell.ours.mean).is_integer() else 1  # a median of counts
            if cell.published.source not in sources:
                sources.append(cell.published.source)
            hw = cell.published.half_width
            pm = "" if hw is None else f" ± {fmt(hw, shown)}"
            ref = sources.index(cell.published.source) + 1
            pub = f"{fmt(cell.published.value, shown)}{pm} [{ref}]"
        ours = cell.ours.text(digits) if cell.ours is not None else "—"
        diff = cell.difference
        diff_text = "—" if diff is None else fmt(diff, digits, sign=True)
        lines.append(
            "| " + " | ".join([*cell.labels, pub, ours, diff_text, verdict_text(cell)]) + " |"
        )
    notes = [f"[{i}] {s}" for i, s in enumerate(sources, start=1)]
    return "\n".join(lines) + ("\n\n" + "  \n".join(notes) if notes else "") + "\n"


def summary(cells: Sequence[Cell], top: int = 3) -> str:
    """Counts per verdict and the ``top`` largest open differences (relative to the value)."""
    counts = {v: sum(c.verdict == v for c in cells) for v in VERDICTS}
    text = (
        f"Cells: {counts['inside']} inside CI, {counts['explained']} explained, "
        f"{counts['open']} open, {counts['no published value']} without a published value "
        f"offline, {counts['missing']} not measured yet."
    )
    open_cells = [c for c in cells if c.verdict == "open"]
    open_cells.sort(key=lambda c: -abs(c.difference) / max(abs(c.published.value), 1e-12))
    if open_cells:
        largest = "; ".join(
            f"{' / '.join(c.labels)}: {fmt(c.difference, sign=True)} "
            f"({c.difference / c.published.value:+.0%})"
            for c in open_cells[:top]
        )
        text += f" Largest open differences: {largest}."
    return text + "\n"


def replace_section(path: Path | str, name: str, body: str) -> None:
    """Replace the text between ``<!-- BEGIN name -->`` and ``<!-- END name -->`` in ``path``.

    Markers are kept; everything outside them is untouched. A missing or repeated marker
    raises ValueError naming it and the sections the file has.
    """
    path = Path(path)
    text = path.read_text()
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        have = [
            line.removeprefix("<!-- BEGIN ").removesuffix(" -->")
            for line in text.splitlines()
            if line.startswith("<!-- BEGIN ")
        ]
        raise ValueError(
            f"{path} needs exactly one '{begin}' followed by one '{end}'; sections present: {have}"
        )
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    path.write_text(f"{head}{begin}\n{body.strip()}\n{end}{tail}")


def sweep_records(sweep_dirs: Iterable[Path | str]) -> list[dict]:
    """The ``result.json`` records of finished (status ok) runs under the sweep folders
    (a missing folder reads as empty: scripts that write a section use
    :func:`require_records`), one per run identity as ``analyze.py`` counts them
    (:func:`unique_runs`): a rerun without ``resume=true`` (``<dir>_rerun1``) or a sweep
    folder named twice adds no run."""
    return unique_runs([pair for folder in sweep_dirs for pair in _ok_records(folder)])


def _ok_records(folder: Path | str) -> list[tuple[Path, dict]]:
    found = []
    for path in sorted(Path(folder).glob("*/result.json")):
        try:
            rec = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue  # half-written record of a running job
        if rec.get("status") == "ok":
            found.append((path, rec))
    return found


def unique_runs(found: Sequence[tuple[Path, dict]]) -> list[dict]:
    """The records of ``(path, record)`` pairs, in their order, one per ``identity``:
    the one whose path comes first in natural order, as ``analyze.py`` reads them (``x``
    before ``x_rerun1``, ``x_rerun2`` before ``x_rerun10``); a path read twice counts
    once, and records without an identity (schema 1) all stay, as ``analyze.py`` keeps
    them."""
    first: dict[str, Path] = {}
    for path, rec in found:
        identity = rec.get("identity")
        if isinstance(identity, str) and identity:
            if identity not in first or natural_key(path) < natural_key(first[identity]):
                first[identity] = path
    kept, seen = [], set()
    for path, rec in found:
        identity = rec.get("identity")
        key = identity if isinstance(identity, str) and identity else path.resolve()
        if key in seen or (key == identity and first[identity] != path):
            continue
        seen.add(key)
        kept.append(rec)
    return kept


def require_records(sweep_dirs: Iterable[Path | str]) -> list[dict]:
    """:func:`sweep_records` of folders named on the command line, each of which must
    exist and hold at least one finished run: otherwise the script stops (exit status 1)
    before it writes anything, naming the folder and how its records come back."""
    found = []
    for folder in sweep_dirs:
        if not Path(folder).is_dir():
            problem = "does not exist"
        else:
            records = _ok_records(folder)
            found += records
            if records:
                continue
            problem = "holds no finished run (no */result.json with status ok)"
        raise SystemExit(
            f"sweep folder {folder} {problem}: restore the archived records first "
            f"(`{RESTORE_COMMAND}` in the repository root writes results/<sweep>/ back to "
            "outputs/multirun/<sweep>/), or run the sweep; nothing was written"
        )
    return unique_runs(found)


def require_some(records: list, what: str, folders: Iterable[Path | str]) -> list:
    """``records`` if there are any, else stop as :func:`require_records` does: the
    folders hold finished runs but none that the section reads (``what``)."""
    if not records:
        raise SystemExit(
            f"sweep folder(s) {', '.join(map(str, folders))} hold no finished {what} run; "
            "nothing was written"
        )
    return records


def seed_span(records: Iterable[Mapping]) -> str:
    """The records' seed range, "seeds a–b" ("no seeds" for none)."""
    seeds = sorted({int(r["seed"]) for r in records})
    return f"seeds {seeds[0]}–{seeds[-1]}" if seeds else "no seeds"


def per_seed(
    records: Iterable[Mapping], metric: str, split: str = "test"
) -> dict[tuple[str, str], dict[int, float]]:
    """{(dataset, model): {seed: metric}} from run records (first record per seed wins)."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for rec in records:
        value = rec.get("metrics", {}).get(split, {}).get(metric)
        if value is None:
            continue
        out.setdefault((rec["dataset"], rec["model"]), {}).setdefault(int(rec["seed"]), value)
    return out


def run_cost(records: Iterable[Mapping]) -> tuple[int, float]:
    """Number of runs and their summed wall time in hours."""
    records = list(records)
    return len(records), sum(float(r.get("wall_time_s") or 0.0) for r in records) / 3600.0


def method_table(
    rows: Mapping[str, str],
    columns: Mapping[str, str],
    cell: Callable[[str, str], str],
    align: str = "---",
) -> list[str]:
    """Markdown lines of a method × column table: ``cell(column, row)`` fills each cell."""
    lines = [
        "| method | " + " | ".join(columns.values()) + " |",
        "|---|" + f"{align}|" * len(columns),
    ]
    for row, row_label in rows.items():
        lines.append(f"| {row_label} | " + " | ".join(cell(c, row) for c in columns) + " |")
    return lines


def render_matrix(
    values: Mapping[tuple[str, str], Mapping[int, float]],
    rows: Mapping[str, str],
    columns: Mapping[str, str],
    digits: int = 4,
) -> str:
    """Markdown table of mean ± 95 % t half-width (n) per (column, row) key; — where absent."""

    def cell(column: str, row: str) -> str:
        seeds = values.get((column, row))
        return Ours.from_values(seeds.values()).text(digits) if seeds else "—"

    return "\n".join(method_table(rows, columns, cell)) + "\n"


def cost_by_cell(records: Iterable[Mapping]) -> dict[tuple[str, str], list[float]]:
    """{(dataset, model): [wall seconds per run]} of finished runs."""
    out: dict[tuple[str, str], list[float]] = {}
    for rec in records:
        out.setdefault((rec["dataset"], rec["model"]), []).append(float(rec["wall_time_s"] or 0))
    return out
