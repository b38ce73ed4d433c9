"""Hi-ToM in pragexp.report (the task declares this module): accuracy per order with and without deception and
per story length, the authors' joint accuracy per order, GPT-4's published cells beside ours, and a figure.

- Tables: a row per run and deception setting (no deception, deception, both), a column per order and all
  orders (`test/acc/<deception>:order_<k>`, `test/acc/order_<k>`, ...); then per story length; then the joint
  accuracy (`test/joint_acc/order_<k>`: a story right at order k when its questions of orders 0..k all are).
  Each cell `mean ± standard error (n=stories)` from metrics.json, clustered by story. Chance: 1/15 (the joint
  accuracy's: (1/15)^(k+1)). Published: GPT-4's cells of the task's paper file (hitom.json: the authors'
  GPT-4_data.txt, means of their cells, with each reply of another shape dropped from its cell), under the
  template of the same style; the other models' and the joint figures are in the paper's figures only: no row
  rather than a guess.
"""

from __future__ import annotations

from pathlib import Path

from pragexp.data.hitom.datamodule import DECEPTION, LENGTH_NAMES, ORDER_NAMES
from pragexp.reporting.groups import bar_panels, figure_cell, run_label
from pragexp.reporting.markdown import table_section
from pragexp.reporting.papers import read_paper_table
from pragexp.reporting.results import Column

TASK = "hitom"
CHANCE = 1 / 15  # fifteen choices
BOTH = "both"
PAPER = Path(__file__).with_name("hitom.json")


def own_runs(runs) -> list:
    return sorted((r for r in runs if r.task == TASK), key=lambda r: (run_label(r), str(r.path)))


def group(part: str, order: str | None) -> str | None:
    """The metrics' group of a deception setting or length (BOTH: every story) at an order (None: every
    order)."""
    if part == BOTH:
        return order
    return part if order is None else f"{part}:{order}"


def published_rows(parts) -> list[list[str]]:
    """GPT-4's published cells (hitom.json) per part, a row each where the paper file has any."""
    table = read_paper_table(PAPER, TASK) or {"rows": {}}
    rows = []
    for name, cells in table["rows"].items():
        if name == "chance":
            continue
        for part in parts:
            found = [cells.get(_key("acc", group(part, order))) for order in (*ORDER_NAMES, None)]
            if any(v is not None for v in found):
                shown = ["" if v is None else f"{v:.3f}" for v in found]
                rows.append([f"{name} (paper)", part.replace("_", " "), *shown])
    return rows


def _key(metric: str, group_name: str | None) -> str:
    return f"test/{metric}" if group_name is None else f"test/{metric}/{group_name}"


def accuracy_rows(runs, parts) -> list[list[str]]:
    rows = [
        [run_label(run), part.replace("_", " "), *(figure_cell(run, group(part, o)) for o in ORDERS_ALL)]
        for run in runs
        for part in parts
        if any(_key("acc", group(part, o)) in run.metrics for o in ORDER_NAMES)
    ]
    return [*rows, *published_rows(parts), ["chance", "", *[f"{CHANCE:.3f}"] * len(ORDERS_ALL)]]


def joint_rows(runs, parts) -> list[list[str]]:
    rows = []
    for run in runs:
        for part in parts:
            keys = [_key("joint_acc", group(part, o)) for o in ORDER_NAMES]
            if any(k in run.metrics for k in keys):
                cells = [figure_cell(run, group(part, o), "test/joint_acc") for o in ORDER_NAMES]
                rows.append([run_label(run), part.replace("_", " "), *cells])
    return [*rows, ["chance", "", *(f"{CHANCE ** (k + 1):.3g}" for k in range(len(ORDER_NAMES)))]]


ORDERS_ALL = (*ORDER_NAMES, None)
HEADER = ["model, template", "stories", *(o.replace("_", " ") for o in ORDER_NAMES), "all orders"]


def sections(runs) -> list[str]:
    ours = own_runs(runs)
    if not ours:
        return []
    out = ["## Hi-ToM (He et al. 2023): higher-order theory of mind", ""]
    out += [
        "Accuracy: mean ± standard error clustered by story (n=stories); chance 1/15. Joint accuracy: a "
        "story "
        "counts at order k when its questions of orders 0..k are all right (the authors' "
        "check_response.ipynb). "
        "A reply the authors' reading cannot read is wrong here (`unparsed`); they dropped it from the cell. "
        "(paper): GPT-4, means of the authors' per-cell accuracies (hitom.json).",
        "",
    ]
    out += table_section(
        "Accuracy per order, without and with deception", HEADER, accuracy_rows(ours, (*DECEPTION, BOTH))
    )
    out += table_section(
        "Accuracy per order and story length (chapters)", HEADER, accuracy_rows(ours, LENGTH_NAMES)
    )
    out += table_section(
        "Joint accuracy per order (orders 0..k all right)", HEADER[:-1], joint_rows(ours, (BOTH, *DECEPTION))
    )
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`hitom_orders.png`: a panel per run, a cluster per order (and all), a bar per deception setting and
    both."""
    ours = own_runs(runs)
    if not ours:
        return []
    title = (
        "Hi-ToM: accuracy per order, without and with deception (whiskers: 95% interval, clustered by story)"
    )
    xs = [*(o.replace("_", " ") for o in ORDER_NAMES), "all orders"]

    def cell(x: str, part: str) -> str | None:
        return group(part, None if x == "all orders" else x.replace(" ", "_"))

    path = Path(folder) / "hitom_orders.png"
    return [bar_panels(ours, xs, (*DECEPTION, BOTH), cell, CHANCE, title, path)]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []
