"""The scorecard (`--scorecard FILE.md`, docs/reports.md, "Scorecard"): a column per headline metric the runs'
tasks declare, rows chance, majority, the papers', then ours by run.json's `model.row` and model settings."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import cycle
from pathlib import Path

from pragexp.report.label_shares import collapse_text, mean_shares
from pragexp.report.runs import Row, Run, group_runs
from pragexp.report.sections import section_modules
from pragexp.report.tables import load_paper
from pragexp.reporting.figures import bar_groups
from pragexp.reporting.markdown import markdown_table
from pragexp.reporting.results import Cell, Column, data_facts, data_report, settings_text, summarise
from pragexp.utils.io import atomic_output

MISSING = "–"
COLLAPSE_MARK = "†"  # a cell whose runs predict one label for more than 90% of the test items
COLLAPSED = f"{COLLAPSE_MARK} One label takes more than 90% of the cell's test predictions"
HATCHED = {"hatch": "//", "edgecolor": "white"}  # a published bar
PAPER_PREFIX = re.compile(r"^table\d+_")  # GRICE's `table5_memnn`: named like our experiments' rows
CAPTION = (
    "Test scores as fractions. Ours: mean ± its standard error over items (n items), where the runs wrote "
    "it; over several runs, or prompt templates for an LLM row with several, their mean, then `sd` their "
    "sample std (`pop. sd`: population std). chance: a uniform guess; majority: the runs of a model that "
    "predicts one label, else the training split's most frequent label scored on the test split "
    f"(data_report.json); (paper): published. {MISSING}: no value."
)


@dataclass
class ScoreRow:
    name: str
    kind: str  # chance | majority | paper | trained | llm
    cells: dict[str, Cell] = field(default_factory=dict)  # column title -> cell
    notes: dict[str, str] = field(default_factory=dict)  # column title -> its runs' task settings, its pick


@dataclass
class Scorecard:
    columns: list[Column]
    rows: list[ScoreRow]


def columns_for(runs: list[Run]) -> list[Column]:
    """The headline columns the runs declare, in their declared order; a dataset section's own where it has
    one."""
    own = {column.title: column for module in section_modules(runs) for column in module.columns(runs)}
    found: dict[str, tuple[int, Column]] = {}
    for run in runs:
        for h in run.record.task.headline:
            column = Column(h.title, run.task, h.key, h.chance, facts=data_facts(run.record))
            found.setdefault(h.title, (h.order, own.get(h.title) or column))
    return [column for _, column in sorted(found.values(), key=lambda found: found[0])]


def _score_row(run: Run, column: Column) -> Row | None:
    """The run's row in the column: its model's row and model settings; its task settings aside. The majority
    baseline (one label by construction) has one row whatever its settings."""
    if not column.takes(run) or (name := column.row(run)) is None:
        return None
    if run.record.model.one_label:
        return Row(column.title, name, "", None, (), kind="majority")
    declared, kind = run.record.settings, "llm" if run.record.model.llm is not None else "trained"
    # A limited run (some test items only: `data.limit`) names its limit in its row, never in a note alone.
    limit = run.record.data.setting.get("limit")
    limited = (f"data.limit={limit}",) if limit is not None else ()
    aside = (*(s for s in declared.task if not s.startswith("data.limit=")), *run.foreign_data)
    return Row(column.title, name, "", None, (*declared.model, *limited), kind=kind, aside=aside)


def model_rows(runs: list[Run], columns: list[Column]) -> dict[str, list[ScoreRow]]:
    """{kind: rows} of our runs (majority: at most one), each sorted by name."""
    grouped: dict[tuple, dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for column in columns:
        for row in group_runs(runs, partial(_score_row, column=column)).get(column.title, []):
            grouped[(row.kind, row.name, row.settings)][column.title].append(row)
    out: dict[str, list[ScoreRow]] = defaultdict(list)
    for (kind, name, own), by_column in sorted(grouped.items()):
        row, apart = ScoreRow(name + settings_text(own), kind), {}
        for column in columns:
            variants = by_column.get(column.title, [])
            for variant in variants:
                if (cell := column.cell(variant.runs)) is None:
                    continue
                shares = mean_shares(variant.runs) if kind != "majority" else None
                if shares and shares.collapsed():
                    cell = replace(cell, collapse=collapse_text(shares))
                target, noted = row, variant.aside
                if variant.aside and len(variants) > 1:  # a row of its own, named with its settings
                    text = settings_text((*own, *variant.aside))
                    target, noted = apart.setdefault(variant.aside, ScoreRow(name + text, kind)), ()
                target.cells[column.title] = cell
                if said := ", ".join(filter(None, (*noted, cell.note))):
                    target.notes[column.title] = said
        out[kind] += [r for r in (row, *apart.values()) if r.cells]
    return out


def majority_share(counts: dict) -> float | None:
    """The test share of the training split's most frequent label (the first on a tie); None without
    counts."""
    train, test = counts.get("train"), counts.get("test")
    if not train or not test or not sum(test.values()):
        return None
    return test.get(max(train, key=lambda label: train[label]), 0) / sum(test.values())


def majority_row(runs: list[Run], columns: list[Column], from_runs: ScoreRow | None) -> ScoreRow:
    """The majority runs' cells; in the other columns, the baseline computed from the data reports of the
    column's runs (one value per distinct data)."""
    row = from_runs or ScoreRow("majority", "majority")
    for column in (c for c in columns if c.title not in row.cells):
        per_data: dict[str, float] = {}
        for run in runs:
            counts = data_report(run).get("label_counts") if column.takes(run) else None
            if counts and (share := majority_share(counts)) is not None:
                per_data[json.dumps(counts, sort_keys=True)] = share
        if per_data:
            s = summarise(list(per_data.values()))
            std = s["std"] if s["n"] > 1 else None
            row.cells[column.title] = Cell(s["mean"], std, s["n"], unit="data sets")
    return row


def published_rows(columns: list[Column], runs: list[Run]) -> list[ScoreRow]:
    """The papers' rows, in the papers' order, each in the columns that take it (see `Column.published`)."""
    rows: dict[str, ScoreRow] = {}
    for column in columns:
        paper = load_paper(column.task, runs=[run for run in runs if run.task == column.task])
        for name, rest, cell in column.published(paper["rows"]):
            label = f"{PAPER_PREFIX.sub('', name)} ({', '.join(['paper', *rest])})"
            row = rows.setdefault(label, ScoreRow(label, "paper"))
            row.cells[column.title] = cell
            if cell.note:
                row.notes[column.title] = cell.note
    return list(rows.values())


def build(runs: list[Run]) -> Scorecard:
    columns = columns_for(runs)
    ours = model_rows(runs, columns)
    chance = ScoreRow("chance", "chance", {c.title: Cell(c.chance) for c in columns if c.chance is not None})
    majority = majority_row(runs, columns, next(iter(ours.get("majority", [])), None))
    published = published_rows(columns, runs)
    return Scorecard(columns, [chance, majority, *published, *ours.get("trained", []), *ours.get("llm", [])])


def markdown(card: Scorecard) -> str:
    def text(row: ScoreRow, title: str) -> str:
        cell = row.cells.get(title)
        return MISSING if cell is None else cell.text + (f" {COLLAPSE_MARK}" if cell.collapse else "")

    header = ["model", *(c.title for c in card.columns)]
    lines = [[row.name, *(text(row, c.title) for c in card.columns)] for row in card.rows]
    notes = [f"{row.name}, {title}: {note}" for row in card.rows for title, note in row.notes.items()]
    covers = [f"{column.title}: {column.note}" for column in card.columns if column.note]
    marked = [f"{r.name}, {t}: {c.collapse}" for r in card.rows for t, c in r.cells.items() if c.collapse]
    out = ["## Scorecard", "", *markdown_table(header, lines), "", CAPTION]
    for head, said in (("Columns", covers), ("Task settings of a cell's runs", notes), (COLLAPSED, marked)):
        out += ["", f"{head}: {'; '.join(said)}."] if said else []
    return "\n".join([*out, ""])


def _colors(rows: list[ScoreRow]) -> dict[str, tuple]:
    """A color per row: ours from tab10 then tab20, the papers' from tab20b and tab20c (never one of ours)."""
    from matplotlib import colormaps

    ours = cycle([*colormaps["tab10"].colors, *colormaps["tab20"].colors[1::2]])
    papers = cycle([*colormaps["tab20b"].colors, *colormaps["tab20c"].colors[:16]])
    return {row.name: next(papers if row.kind == "paper" else ours) for row in rows}


def plot(card: Scorecard, out: Path) -> bool:
    """Grouped bars: a group per column, a bar per row with a value (published ones hatched) and its 95%
    interval over items, chance dashed across its group. False when no row but chance has a value."""
    from matplotlib.figure import Figure

    bars = [row for row in card.rows if row.kind != "chance" and row.cells]
    if not bars:
        return False
    chance = next((row for row in card.rows if row.kind == "chance"), ScoreRow("chance", "chance"))
    titles, color = [c.title for c in card.columns], _colors(bars)
    most = max(max(sum(title in row.cells for row in bars) for title in titles), 4)
    fig = Figure(figsize=(max(8.0, 0.12 * most * len(titles) + 2), 5.0))
    ax = fig.subplots()
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    series = []
    for row in bars:
        cells = [row.cells.get(title) for title in titles]
        errors = [math.nan if c is None or c.half is None else c.half for c in cells]
        style = {"color": color[row.name], **(HATCHED if row.kind == "paper" else {})}
        series.append((row.name, [c and c.mean for c in cells], errors, style))
    width = 0.8 / most  # the same for every bar: a lone bar does not fill its group
    bar_groups(ax, titles, series, "test score (fraction)", width, packed=True, rotation=20, ha="right")
    labels = iter(["chance"])  # one legend entry for every group's line
    for j, title in enumerate(titles):
        if title in chance.cells:
            half = max(sum(title in row.cells for row in bars), 1) * width / 2 + 0.05
            mean, label = chance.cells[title].mean, next(labels, None)
            ax.hlines(mean, j - half, j + half, colors="black", linestyles="--", label=label, zorder=3)
    ax.set(xlim=(-0.5, len(titles) - 0.5), title="Scorecard (hatched: published)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=4)
    with atomic_output(out, binary=True) as f:  # no tight_layout: the legend below keeps the axes as drawn
        fig.savefig(f, format="png", dpi=120, bbox_inches="tight")
    return True
