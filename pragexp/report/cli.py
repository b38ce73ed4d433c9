"""`python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png] [--sweep-plot FILE.png]`
(see pragexp.report)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragexp.report.plots import plot_per_group
from pragexp.report.runs import find_runs
from pragexp.report.sweeps import find_sweeps, plot_sweep, sweep_report
from pragexp.report.tables import markdown_report
from pragexp.utils.io import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pragexp.report",
        description="Results tables from run directories, beside the papers' published numbers.",
    )
    parser.add_argument("dirs", nargs="+", help="run or multirun directories (searched for metrics.json)")
    parser.add_argument("--out", type=Path, help="also write the markdown here (atomically)")
    parser.add_argument("--plot", type=Path, help="PNG of per-implicature-type bars (Fig. 5 for grice_qa)")
    parser.add_argument(
        "--sweep-plot",
        type=Path,
        help="PNG of each sweep's monitored metric against every swept parameter (several sweeps: FILE-<dir>.png)",
    )
    args = parser.parse_args(argv)
    try:
        runs = find_runs(args.dirs)
    except (FileNotFoundError, ValueError) as e:
        print(f"pragexp.report: {e}", file=sys.stderr)
        return 2
    sweeps = find_sweeps(args.dirs)  # multirun dirs: their trials ranked, the best as a command line
    text = "\n".join([markdown_report(runs), *map(sweep_report, sweeps)])
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    if args.plot and not plot_per_group(runs, args.plot):
        print("pragexp.report: no per-group metrics to plot", file=sys.stderr)
    for sweep in sweeps if args.sweep_plot else []:
        out = args.sweep_plot
        if len(sweeps) > 1:
            out = out.with_name(f"{out.stem}-{sweep.path.name}{out.suffix}")
        if not plot_sweep(sweep, out):
            print(
                f"pragexp.report: {sweep.path}: no finished trials or swept parameters to plot",
                file=sys.stderr,
            )
    return 0
