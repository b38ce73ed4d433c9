"""`python -m pragexp.report DIR [DIR ...] [--out FILE.md] [--plot FILE.png] [--sweep-plot FILE.png]
[--figures DIR] [--scorecard FILE.md]`, and `python -m pragexp.report compare RUN_A RUN_B [--seed S]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragexp.report import compare, label_shares, scorecard, training_curves
from pragexp.report.runs import find_runs
from pragexp.report.sections import section_modules
from pragexp.report.sweeps import find_sweeps, plot_sweep, sweep_report
from pragexp.report.tables import markdown_report, plot_per_group, scoring_sections
from pragexp.utils.contracts import ContractError
from pragexp.utils.io import atomic_write_text

DESCRIPTION = "Results tables from run directories, beside the papers' published numbers."
OPTIONS = {  # option -> help
    "--out": "also write the markdown here (atomically)",
    "--plot": "PNG of per-implicature-type bars (Fig. 5 for grice_qa); with --scorecard, the scorecard's "
    "bars",
    "--sweep-plot": "PNG of each sweep's monitored metric against each swept parameter (several: "
    "FILE-<dir>.png)",
    "--figures": "folder for the datasets' own figures and a confusion matrix per classifier row",
    "--scorecard": "write the scorecard here (a row per model, a column per headline metric); printed too",
}


def warn(text: str) -> None:
    print(f"pragexp.report: {text}", file=sys.stderr)


def write_plots(args: argparse.Namespace, runs, card, sweeps, sections) -> None:
    if args.plot and not (scorecard.plot(card, args.plot) if card else plot_per_group(runs, args.plot)):
        warn("no scorecard values to plot" if card else "no per-group metrics to plot")
    for sweep in sweeps if args.sweep_plot else []:
        out = args.sweep_plot
        out = out.with_name(f"{out.stem}-{sweep.path.name}{out.suffix}") if len(sweeps) > 1 else out
        if not plot_sweep(sweep, out):
            warn(f"{sweep.path}: no finished trials or swept parameters to plot")
    for module in (*sections, label_shares, training_curves) if args.figures else ():
        for path in module.figures(runs, args.figures):
            warn(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:  # two runs item by item
        compare.main(argv[1:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m pragexp.report", description=DESCRIPTION)
    parser.add_argument("dirs", nargs="+", help="run or multirun directories (searched for metrics.json)")
    for option, text in OPTIONS.items():
        parser.add_argument(option, type=Path, help=text)
    args = parser.parse_args(argv)
    try:
        runs = find_runs(args.dirs)
        sections = section_modules(runs)  # the datasets' sections the runs declare, each checked
    except (FileNotFoundError, ValueError, ContractError) as e:
        warn(str(e))
        return 2
    sweeps = find_sweeps(args.dirs)  # multirun dirs: their trials ranked, the best as a command line
    text = "\n".join([markdown_report(runs), *map(sweep_report, sweeps)])
    extra = [*scoring_sections(runs), *(line for m in sections for line in m.sections(runs))]
    text = text.rstrip("\n") + "\n\n" + "\n".join(extra) if extra else text
    card = scorecard.build(runs) if args.scorecard else None
    if card is not None:
        card_text = scorecard.markdown(card)
        text = text.rstrip("\n") + "\n\n" + card_text
        atomic_write_text(args.scorecard, card_text)
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    write_plots(args, runs, card, sweeps, sections)
    return 0
