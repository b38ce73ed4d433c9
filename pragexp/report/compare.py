"""Two runs on the same items, compared item by item (pragexp.metrics.paired), from their `predictions.jsonl`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl
from pragexp.metrics.paired import PairedDifference, compare_records
from pragexp.metrics.uncertainty import format_estimate
from pragexp.utils.markdown import markdown_table

PREDICTIONS = "predictions.jsonl"


def read_predictions(run: str | Path) -> list[dict]:
    """A run's prediction records (a run directory or its predictions.jsonl), each holding its `index`."""
    path = Path(run)
    path = path / PREDICTIONS if path.is_dir() else path
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a run directory holding {PREDICTIONS}, or the file)")
    records = []
    for number, record in iter_jsonl(path):  # errors name the file and the line
        if "index" not in record:
            raise ValueError(f"{path}, line {number}: a prediction record needs the field 'index'")
        records.append(record)
    return records


def compare_runs(run_a: str | Path, run_b: str | Path, seed: int = 0) -> list[PairedDifference]:
    """The paired differences of two runs' prediction records (pragexp.metrics.paired.compare_records)."""
    records_a, records_b = read_predictions(run_a), read_predictions(run_b)
    if not records_a or not records_b:
        raise ValueError(f"{run_a} and {run_b} hold no prediction records")
    return compare_records(records_a, records_b, seed)


def format_comparison(differences: Sequence[PairedDifference], run_a: str, run_b: str) -> str:
    """A markdown table of the differences, with what A and B are."""
    header = ["metric", "group", "A", "B", "B - A", "95% CI (paired bootstrap)", "test", "p", "items (rows)"]
    rows = []
    for d in differences:
        ci = f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else "-"
        a, b = (format_estimate(e.mean, e.stderr, e.items) for e in (d.a, d.b))
        cells = [d.metric, d.group, a, b, f"{d.difference:+.3f}", ci, d.test, f"{d.p_value:.4g}"]
        rows.append([*cells, f"{d.items} ({d.rows})"])
    return "\n".join([f"A: {run_a}", f"B: {run_b}", "", *markdown_table(header, rows), ""])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pragexp.report compare", description=__doc__)
    parser.add_argument("run_a", help=f"a run directory holding {PREDICTIONS}, or the file")
    parser.add_argument("run_b", help="the other run, on the same items")
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap and the random sign flips")
    args = parser.parse_args(argv)
    try:
        differences = compare_runs(args.run_a, args.run_b, args.seed)
    except (OSError, ValueError) as error:
        parser.exit(2, f"compare: {error}\n")
    print(format_comparison(differences, args.run_a, args.run_b), end="")
