"""ToMATO in pragexp.report (the task declares this module): accuracy per mental state and order, false belief
or not, the asked-about speaker's personality, and a figure of the states and orders.

- Tables: a row per run and order (first, second, both where it has both), a column per mental state and the
  whole order (`test/acc/<state>:<order>`, `test/acc/<order>`, `test/acc/<state>`); then false belief or not,
  then each of the five traits high or low. Each cell `mean ± standard error (n=conversations)` from
  metrics.json: the standard error is clustered by conversation (the questions on one transcript are not
  independent), so n counts conversations. Chance: 1 / 4 options. No published row: Shinoda et al.'s
  accuracies are not transcribed in this repository (../shared/paper_numbers.md, the sample's README), and a
  cell is left out rather than guessed.
"""

from __future__ import annotations

from pathlib import Path

from pragexp.data.tomato.datamodule import BELIEF, ORDERS, TRAIT_LEVELS
from pragexp.data.tomato.io import STATES
from pragexp.reporting.groups import bar_panels, figure_cell, run_label
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import Column

TASK = "tomato"
CHANCE = 0.25  # four options
BOTH = "both orders"
ALL_STATES = "all states"


def own_runs(runs) -> list:
    return sorted((r for r in runs if r.task == TASK), key=lambda r: (run_label(r), str(r.path)))


def orders(runs) -> list[str]:
    """The orders any of the runs has questions of, then both together where there are two."""
    found = [o for o in ORDERS if any(f"test/acc/{o}" in r.metrics for r in runs)]
    return [*found, BOTH] if len(found) > 1 else found


def group(state: str, order: str) -> str | None:
    """The metrics' group of a mental state (ALL_STATES: every one) in an order (BOTH: either)."""
    if state == ALL_STATES:
        return None if order == BOTH else order
    return state if order == BOTH else f"{state}:{order}"


def state_rows(runs) -> list[list[str]]:
    rows = [
        [
            run_label(run),
            order.replace("_", " "),
            *(figure_cell(run, group(s, order)) for s in (*STATES, ALL_STATES)),
        ]
        for run in runs
        for order in orders([run])
    ]
    return [*rows, ["chance", "", *[f"{CHANCE:.3f}"] * (len(STATES) + 1)]]


def by_groups(runs, names) -> list[list[str]]:
    """A row per run of the groups' cells and the whole run's, then chance."""
    rows = [[run_label(run), *(figure_cell(run, g) for g in names), figure_cell(run)] for run in runs]
    return [*rows, ["chance", *[f"{CHANCE:.3f}"] * (len(names) + 1)]]


def sections(runs) -> list[str]:
    ours = own_runs(runs)
    if not ours:
        return []
    out = ["## ToMATO (Shinoda et al. 2025): theory of mind in conversation", ""]
    out += [
        "Accuracy: mean ± standard error clustered by conversation (n=conversations); chance 1/4. No "
        "published "
        "row: the paper's accuracies are not transcribed here.",
        "",
    ]
    out += table_section(
        "Accuracy per mental state and order",
        ["model, template", "order", *STATES, ALL_STATES],
        state_rows(ours),
    )
    out += table_section(
        "False belief or not",
        ["model, template", *(b.replace("_", " ") for b in BELIEF), "all"],
        by_groups(ours, BELIEF),
    )
    traits = [t for t in TRAIT_LEVELS if any(f"test/acc/{t}" in r.metrics for r in ours)]
    if traits:
        out += table_section(
            "The asked-about speaker's personality",
            ["model, template", *traits, "all"],
            by_groups(ours, traits),
        )
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`tomato_states.png`: a panel per run, a cluster per mental state (and all), a bar per order."""
    ours = own_runs(runs)
    if not ours:
        return []
    title = "ToMATO: accuracy per mental state and order (whiskers: 95% interval, clustered by conversation)"
    path = Path(folder) / "tomato_states.png"
    return [bar_panels(ours, [*STATES, ALL_STATES], orders(ours), group, CHANCE, title, path)]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []
