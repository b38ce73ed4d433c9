"""The tables of experiments/statistics/README.md: the simulation suite's coverage and level figures per
design (pragexp/metrics/simulation.py, paired_simulation.py, bootstrap_simulation.py; tests/test_simulation.py
asserts them), and with --sweep a grid of designs around them, to show where the interval holds and where it
does not.

python experiments/statistics/coverage_tables.py [--sweep] [--no-f1] [--runs 2000]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
from scipy import stats

from pragexp.metrics.bootstrap_simulation import F1_DESIGNS, F1_RUNS, f1_coverage
from pragexp.metrics.intervals import mean_interval
from pragexp.metrics.paired_simulation import NULL_DESIGNS, POWER_DESIGNS, rejection
from pragexp.metrics.simulation import (
    DESIGNS,
    PERPLEXITY_DESIGNS,
    RUNS,
    Design,
    coverage,
    perplexity_coverage,
)
from pragexp.reporting.markdown import markdown_table

BAND = (0.93, 0.97)


def percent(share: float, error: float | None = None) -> str:
    return f"{100 * share:.1f}" + (f" ± {100 * error:.1f}" if error is not None else "")


def means_table(runs: int = RUNS) -> list[str]:
    rows = []
    for design in DESIGNS:
        found = coverage(design, runs)
        plain = "" if found.plain_wilson is None else percent(found.plain_wilson)
        rows.append(
            [design.name, design.shape, percent(found.covered, found.mc_error), plain, percent(found.old)]
        )
    for design in PERPLEXITY_DESIGNS:
        found = perplexity_coverage(design, runs)
        rows.append([design.name, design.shape, percent(found.covered, found.mc_error), "", ""])
    header = ["design", "shape", "coverage % (± MC s.e.)", "without the pseudo-unit %", "before issue 46 %"]
    return markdown_table(header, rows)


def paired_table() -> list[str]:
    rows = []
    for design in (*NULL_DESIGNS, *POWER_DESIGNS):
        found = rejection(design)
        what = "level" if design.difference == 0 else "power"
        cells = [design.name, design.shape, found.test, what, percent(found.rate, found.mc_error)]
        rows.append([*cells, percent(found.by_rows)])
    header = ["design", "shape", "test", "figure", "rejected at 5% (± MC s.e.)", "McNemar over rows %"]
    return markdown_table(header, rows)


def f1_table() -> list[str]:
    rows = []
    for design in F1_DESIGNS:
        for found in f1_coverage(design, F1_RUNS):
            rows.append([found.design, found.shape, percent(found.covered, found.mc_error)])
    return markdown_table(["figure", "shape", f"coverage % over {F1_RUNS:,} samples (± MC s.e.)"], rows)


def one_row_exact() -> list[str]:
    """One right/wrong row per unit: the coverage computed exactly, over every count of right answers
    (binomial)."""
    sizes, means = (50, 100, 200, 500), (0.5, 0.7, 0.9, 0.95, 0.99)
    rows = []
    for n in sizes:
        right = np.arange(n + 1)
        totals = (np.arange(n)[None, :] < right[:, None]).astype(np.float64)
        interval = mean_interval(totals, np.ones_like(totals), share=True)
        cells = []
        for mean in means:
            covers = (interval.low <= mean) & (mean <= interval.high)
            cells.append(percent(float(np.sum(stats.binom.pmf(right, n, mean) * covers))))
        rows.append([str(n), *cells])
    return markdown_table(["units", *(f"μ = {m:g}" for m in means)], rows)


def sweep() -> list[str]:
    """A grid around the designs: units, rows per unit, mean and correlation, with how many fall in the
    band."""
    grid = itertools.product(
        ((19, 25), 40, 120), (1, 5, (1, 30)), (0.5, 0.8, 0.9, (0.95, 0.99)), (0.1, 0.5, 0.9)
    )
    rows, found, seed = [], [], 1000
    for clusters, size, mean, icc in grid:
        if size == 1 and icc != 0.1:
            continue  # one row per unit: no correlation to vary
        seed += 1
        result = coverage(Design("sweep", clusters, size, mean, 0.0 if size == 1 else icc, seed=seed))
        found.append(result)
        covered = result.covered
        flag = "" if BAND[0] <= covered <= BAND[1] else (" (below)" if covered < BAND[0] else " (above)")
        rows.append(
            [result.shape, percent(covered) + flag, percent(result.plain_wilson), percent(result.old)]
        )
    header = ["shape", "coverage %", "without the pseudo-unit %", "before issue 46 %"]
    counts = [
        band_counts("this interval", [r.covered for r in found]),
        band_counts("without the pseudo-unit", [r.plain_wilson for r in found]),
        band_counts("before issue 46", [r.old for r in found]),
    ]
    return [*markdown_table(header, rows), "", *counts]


def band_counts(label: str, shares: list[float]) -> str:
    inside = sum(BAND[0] <= c <= BAND[1] for c in shares)
    below, above = [c for c in shares if c < BAND[0]], [c for c in shares if c > BAND[1]]
    return (
        f"- {label}: {inside} of {len(shares)} in 93-97%, {len(below)} below (lowest "
        f"{percent(min(shares))}), {len(above)} above (highest {percent(max(shares))})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", action="store_true", help="also the grid of designs around them")
    parser.add_argument("--no-f1", action="store_true", help="leave out the F1 bootstrap (a minute or two)")
    parser.add_argument("--runs", type=int, default=RUNS, help="samples per design of the means' table")
    args = parser.parse_args()
    print(
        "\n".join(["## Means", "", *means_table(args.runs), "", "## Paired tests", "", *paired_table(), ""])
    )
    print("\n".join(["## One row per unit, exactly", "", *one_row_exact(), ""]))
    if not args.no_f1:
        print("\n".join(["## F1 (cluster bootstrap, BCa)", "", *f1_table(), ""]))
    if args.sweep:
        print("\n".join(["## Sweep", "", *sweep(), ""]))


if __name__ == "__main__":
    main()
