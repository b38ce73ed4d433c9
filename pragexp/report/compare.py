"""Two runs on the same items, compared unit by unit (pragexp.metrics.paired), from their `predictions.jsonl`.

The unit is the sampling unit each run's `run.json` declares (`sampling_unit`: its name and why), by which the
rows are paired, resampled and tested; two runs that declare different units are refused. Predictions with no
run.json beside them (a file handed alone) are clustered by their records' `cluster` field where they carry
one, else each row is its own unit, and the table says so. Beside each raw p-value the table prints it
adjusted for the number of comparisons the table holds (pragexp.metrics.multiple: Holm's step-down, which
holds the family-wise error rate).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl
from pragexp.metrics.multiple import METHOD, holm
from pragexp.metrics.paired import ALL, PairedDifference, compare_records
from pragexp.metrics.uncertainty import format_estimate
from pragexp.reporting.markdown import markdown_table
from pragexp.runs.record import RUN_FILE, read_run_record

PREDICTIONS = "predictions.jsonl"


@dataclass(frozen=True)
class Unit:
    """The sampling unit the rows are clustered by, as run.json declares it (`name` None: none declared)."""

    name: str | None
    reason: str | None = None
    clustered: bool = False  # undeclared, but the records carry `cluster`


def predictions_path(run: str | Path) -> Path:
    path = Path(run)
    return path / PREDICTIONS if path.is_dir() else path


def read_predictions(run: str | Path) -> list[dict]:
    """A run's prediction records (a run directory or its predictions.jsonl), each holding its `index`."""
    path = predictions_path(run)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a run directory holding {PREDICTIONS}, or the file)")
    records = []
    for number, record in iter_jsonl(path):  # errors name the file and the line
        if "index" not in record:
            raise ValueError(f"{path}, line {number}: a prediction record needs the field 'index'")
        records.append(record)
    return records


def declared_unit(run: str | Path) -> Unit:
    """The data's `sampling_unit` in the run.json beside the run's predictions (read and checked by
    `read_run_record`: a bad field is named); predictions without a run.json beside them have Unit(None)."""
    folder = predictions_path(run).parent
    if not (folder / RUN_FILE).is_file():
        return Unit(None)
    unit = read_run_record(folder).data.sampling_unit
    return Unit(None) if unit is None else Unit(unit.name, unit.reason)


def comparison_unit(run_a: str | Path, run_b: str | Path, records: Sequence[dict]) -> Unit:
    """The unit both runs declare (one of them, where the other declares none); refused where they differ."""
    unit_a, unit_b = declared_unit(run_a), declared_unit(run_b)
    if unit_a.name and unit_b.name and unit_a.name != unit_b.name:
        raise ValueError(
            f"the runs declare different sampling units ({run_a}: {unit_a.name}; {run_b}: {unit_b.name}): "
            "rows clustered otherwise cannot be paired"
        )
    unit = unit_a if unit_a.name else unit_b
    if unit.name is None and any("cluster" in r for r in records):
        return Unit(None, clustered=True)
    return unit


def comparison(run_a: str | Path, run_b: str | Path, seed: int = 0) -> tuple[list[PairedDifference], Unit]:
    """The paired differences of two runs' prediction records (pragexp.metrics.paired.compare_records) and the
    unit their rows are paired by."""
    records_a, records_b = read_predictions(run_a), read_predictions(run_b)
    if not records_a or not records_b:
        raise ValueError(f"{run_a} and {run_b} hold no prediction records")
    unit = comparison_unit(run_a, run_b, records_a + records_b)
    return compare_records(records_a, records_b, seed), unit


def compare_runs(run_a: str | Path, run_b: str | Path, seed: int = 0) -> list[PairedDifference]:
    return comparison(run_a, run_b, seed)[0]


def unit_line(unit: Unit, differences: Sequence[PairedDifference]) -> str:
    """`paired by conversation (n = 67 clusters): <reason>`, or what an undeclared run's rows are paired
    by."""
    units = next((d.items for d in differences if d.group == ALL), None)
    count = f"n = {units} clusters" if units is not None else "no rows"
    if unit.name:
        return f"paired by {unit.name} ({count})" + (f": {unit.reason}" if unit.reason else "")
    if unit.clustered:
        return f"unit: not declared in run.json; rows paired by their records' `cluster` ({count})"
    return f"unit: not declared (each row its own; {count})"


def format_comparison(
    differences: Sequence[PairedDifference], run_a: str, run_b: str, unit: Unit = Unit(None)
) -> str:
    """A markdown table of the differences, with what A and B are, the unit the rows are paired by, and each
    p-value beside its Holm adjustment for the table's number of comparisons."""
    header = [
        "metric",
        "group",
        "A",
        "B",
        "B - A",
        "95% CI (paired cluster bootstrap)",
        "test",
        "p",
        "p (Holm)",
    ]
    adjusted = holm([d.p_value for d in differences])
    rows = []
    for d, p_holm in zip(differences, adjusted, strict=True):
        ci = f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else "-"
        a, b = (format_estimate(e.mean, e.stderr, e.items) for e in (d.a, d.b))
        cells = [
            d.metric,
            d.group,
            a,
            b,
            f"{d.difference:+.3f}",
            ci,
            d.test,
            f"{d.p_value:.4g}",
            f"{p_holm:.4g}",
        ]
        rows.append([*cells, f"{d.items} ({d.rows})"])
    count = len(differences)
    note = (
        f"{count} comparison{'s' if count != 1 else ''} in this table; p (Holm): adjusted for all {count} by "
        f"{METHOD}."
    )
    lines = [f"A: {run_a}", f"B: {run_b}", unit_line(unit, differences), ""]
    return "\n".join([*lines, *markdown_table([*header, "units (rows)"], rows), "", note, ""])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pragexp.report compare", description=__doc__)
    parser.add_argument("run_a", help=f"a run directory holding {PREDICTIONS}, or the file")
    parser.add_argument("run_b", help="the other run, on the same items")
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap and the random sign flips")
    args = parser.parse_args(argv)
    try:
        differences = compare_runs(args.run_a, args.run_b, args.seed)
        unit = comparison_unit(
            args.run_a, args.run_b, read_predictions(args.run_a) + read_predictions(args.run_b)
        )
    except (OSError, ValueError) as error:
        parser.exit(2, f"compare: {error}\n")
    print(format_comparison(differences, args.run_a, args.run_b, unit), end="")
