"""`python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png] [--sweep-plot FILE.png]
[--figures DIR] [--scorecard FILE.md]` (see pragexp.report and pragexp.report.scorecard)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragexp.report import benchmarks, confusion, intentions, scorecard
from pragexp.report.plots import plot_per_group
from pragexp.report.runs import find_runs
from pragexp.report.sweeps import find_sweeps, plot_sweep, sweep_report
from pragexp.report.tables import markdown_report
from pragexp.utils.io import atomic_write_text

# Task-specific reports beyond the generic tables: modules with `sections(runs) -> markdown lines` and
# `figures(runs, folder) -> written paths`.
EXTRAS = (intentions, benchmarks, confusion)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pragexp.report",
        description="Results tables from run directories, beside the papers' published numbers.",
    )
    parser.add_argument("dirs", nargs="+", help="run or multirun directories (searched for metrics.json)")
    parser.add_argument("--out", type=Path, help="also write the markdown here (atomically)")
    parser.add_argument(
        "--plot",
        type=Path,
        help="PNG of per-implicature-type bars (Fig. 5 for grice_qa); with --scorecard, the scorecard's bars",
    )
    parser.add_argument(
        "--sweep-plot",
        type=Path,
        help="PNG of each sweep's monitored metric against every swept parameter (several sweeps: FILE-<dir>.png)",
    )
    parser.add_argument(
        "--figures",
        type=Path,
        help="folder for the tasks' own figures (intentions: Fig. 2, 3) and a confusion matrix per "
        "classifier row",
    )
    parser.add_argument(
        "--scorecard",
        type=Path,
        help="write the scorecard here (markdown: a row per model, a column per dataset's headline metric); "
        "it is printed too",
    )
    args = parser.parse_args(argv)
    try:
        runs = find_runs(args.dirs)
    except (FileNotFoundError, ValueError) as e:
        print(f"pragexp.report: {e}", file=sys.stderr)
        return 2
    sweeps = find_sweeps(args.dirs)  # multirun dirs: their trials ranked, the best as a command line
    text = "\n".join([markdown_report(runs), *map(sweep_report, sweeps)])
    extra = [line for module in EXTRAS for line in module.sections(runs)]
    if extra:
        text = text.rstrip("\n") + "\n\n" + "\n".join(extra)
    card = scorecard.build(runs) if args.scorecard else None
    if card is not None:
        card_text = scorecard.markdown(card)
        text = text.rstrip("\n") + "\n\n" + card_text
        atomic_write_text(args.scorecard, card_text)
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    if args.plot and card is not None:
        if not scorecard.plot(card, args.plot):
            print("pragexp.report: no scorecard values to plot", file=sys.stderr)
    elif args.plot and not plot_per_group(runs, args.plot):
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
    for module in EXTRAS if args.figures else ():
        for path in module.figures(runs, args.figures):
            print(f"pragexp.report: wrote {path}", file=sys.stderr)
    return 0
