"""OpenToM in pragexp.report (the task declares this module): the authors' macro-F1 per genre and order, over
every story evaluated and as their five-batch mean and spread, the replies their matching cannot read,
accuracy, and a figure.

- Macro-F1 (`test/macro_f1/<genre>:<order>`: scikit-learn's over the answered questions, as the authors'
  evaluate.py; multi-hop pools fullness and accessibility as theirs does, each also apart): a row per run, a
  column per genre and order, the paper's table's columns (Loc coarse, Loc fine, MHop first and second order,
  Att); a cell shows the figures metrics.json holds for it. Then per batch of the authors' protocol: their
  mean ± population sd over the batches (`macro_f1_batch_mean`, `macro_f1_batch_sd`: their "Average F1" and
  its spread). `unparsed`: the share of a genre's questions whose reply their matching gives no label (their
  "corrupted generation", left out of their F1; 0 for a log-likelihood row). Chance: the macro-F1 a uniform
  guess over a genre's options scores in expectation on the run's gold labels (data_report.json's counts per
  option: per class 2p/k / (p + 1/k)).
- Accuracy per genre and order: `mean ± standard error (n=stories)`, clustered by story; chance one over the
  genre's options.
- No published row: Xu et al.'s tables are not transcribed in this repository (../shared/paper_numbers.md has
  none, the release's README prints none): a cell is left out rather than guessed.
"""

from __future__ import annotations

import math
from pathlib import Path

from pragexp.data.opentom.questions import ORDERS
from pragexp.reporting.figures import bar_groups, pyplot, save_png
from pragexp.reporting.groups import figure_cell, run_label
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import Column, data_report

TASK = "opentom"
# the paper's columns: (title, metrics group)
F1_COLUMNS = (
    ("Loc coarse 1st", "location_coarse:first_order"),
    ("Loc coarse 2nd", "location_coarse:second_order"),
    ("Loc fine 1st", "location_fine:first_order"),
    ("Loc fine 2nd", "location_fine:second_order"),
    ("MHop 1st", "multihop:first_order"),
    ("MHop 2nd", "multihop:second_order"),
    ("Att", "attitude"),
)
APART = tuple(
    (f"{g} {n}", f"{g}:{o}")
    for g in ("fullness", "accessibility")
    for n, o in zip(("1st", "2nd"), ORDERS, strict=True)
)
ACC_GROUPS = (*(g for _, g in F1_COLUMNS), *(g for _, g in APART))
OPTIONS = {
    "location_coarse": 2,
    "location_fine": 2,
    "multihop": 3,
    "fullness": 3,
    "accessibility": 3,
    "attitude": 3,
}


def own_runs(runs) -> list:
    return sorted((r for r in runs if r.task == TASK), key=lambda r: (run_label(r), str(r.path)))


def shown(runs, columns) -> list[tuple[str, str]]:
    """The columns some run has a figure of (a run of the coarse locations alone has no fine ones)."""
    return [
        (t, g)
        for t, g in columns
        if any(f"test/macro_f1/{g}" in r.metrics or f"test/acc/{g}" in r.metrics for r in runs)
    ]


def batch_cell(metrics: dict, group: str) -> str:
    mean, sd = (
        metrics.get(f"test/macro_f1_batch_mean/{group}"),
        metrics.get(f"test/macro_f1_batch_sd/{group}"),
    )
    if mean is None:
        return ""
    return f"{mean:.3f} ± {sd:.3f} ({int(metrics.get(f'test/macro_f1_batches/{group}', 0))} batches)"


def chance_f1(counts: list[int]) -> float:
    """The expected macro-F1 of a uniform guess over k options on gold counts per option (large-sample): class
    c with gold share p is chosen 1/k of the time, precision p, recall 1/k: F1 = 2p/k / (p + 1/k)."""
    total, k = sum(counts), len(counts)
    return sum(2 * (c / total) / k / (c / total + 1 / k) for c in counts) / k if total else math.nan


def chance_row(runs, columns) -> list[str]:
    counts = next(
        (data_report(r).get("f1_gold_positions") for r in runs if data_report(r).get("f1_gold_positions")), {}
    )
    return [
        "chance (uniform guess)",
        *(f"{chance_f1(counts[g]):.3f}" if g in counts else "" for _, g in columns),
    ]


def sections(runs) -> list[str]:
    ours = own_runs(runs)
    if not ours:
        return []
    f1, apart = shown(ours, F1_COLUMNS), shown(ours, APART)
    out = [
        "## OpenToM (Xu et al. 2024): theory of mind in stories, coarse to fine, physical and psychological",
        "",
    ]
    out += [
        "Macro-F1 as the authors compute it (scikit-learn's over the answered questions; MHop pools fullness "
        "and "
        "accessibility); accuracy: mean ± standard error clustered by story (n=stories). No published row: "
        "the "
        "paper's tables are not transcribed here.",
        "",
    ]
    header = ["model, template", *(t for t, _ in f1)]
    rows = [[run_label(r), *(figure_cell(r, g, "test/macro_f1") for _, g in f1)] for r in ours]
    out += table_section(
        "Macro-F1 per genre and order, every story evaluated", header, [*rows, chance_row(ours, f1)]
    )
    rows = [[run_label(r), *(batch_cell(r.metrics, g) for _, g in f1)] for r in ours]
    out += table_section(
        "Macro-F1 per batch of stories: mean ± population sd (the authors' protocol)", header, rows
    )
    rows = [[run_label(r), *(figure_cell(r, g, "test/unparsed") for _, g in f1)] for r in ours]
    out += table_section("Unparsed: replies the authors' matching gives no label", header, rows)
    if apart:
        rows = [[run_label(r), *(figure_cell(r, g, "test/macro_f1") for _, g in apart)] for r in ours]
        out += table_section(
            "Macro-F1 of fullness and accessibility apart", ["model, template", *(t for t, _ in apart)], rows
        )
    groups = [g for g in ACC_GROUPS if any(f"test/acc/{g}" in r.metrics for r in ours)]
    rows = [[run_label(r), *(figure_cell(r, g) for g in groups), figure_cell(r)] for r in ours]
    rows.append(["chance", *(f"{1 / OPTIONS[g.split(':')[0]]:.3f}" for g in groups), ""])
    out += table_section("Accuracy per genre and order", ["model, template", *groups, "all"], rows)
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`opentom_genres.png`: a panel per run, a cluster per genre, a bar per order of the macro-F1 over every
    story, its whisker the population sd over the batches (the authors' spread)."""
    ours = own_runs(runs)
    if not ours:
        return []
    plt = pyplot()
    genres = ["location_coarse", "location_fine", "multihop", "attitude"]
    fig, axes = plt.subplots(len(ours), 1, figsize=(8.0, 2.8 * len(ours)), squeeze=False)
    for ax, run in zip(axes[:, 0], ours, strict=True):
        series = []
        for order in ORDERS:
            names = [g if g == "attitude" else f"{g}:{order}" for g in genres]
            heights = [run.metrics.get(f"test/macro_f1/{n}", math.nan) for n in names]
            spread = [run.metrics.get(f"test/macro_f1_batch_sd/{n}", math.nan) for n in names]
            if order == ORDERS[1]:  # attitude has no order: one bar
                heights[-1], spread[-1] = math.nan, math.nan
            series.append((order.replace("_", " "), heights, spread, {}))
        bar_groups(ax, [g.replace("_", " ") for g in genres], series, "macro-F1")
        ax.set_title(run_label(run), fontsize=8)
    axes[0, 0].legend(fontsize=7, ncol=2, loc="upper center", bbox_to_anchor=(0.5, 1.4))
    fig.suptitle(
        "OpenToM: macro-F1 per genre and order (whiskers: sd over the authors' batches)", fontsize=10
    )
    return [save_png(fig, Path(folder) / "opentom_genres.png")]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []
