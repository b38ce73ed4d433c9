"""The scorecard: one row per model, one column per headline test metric the runs' tasks declare, in one table and
one plot.

    python -m pragexp.report DIR [DIR ...] --scorecard scorecard.md [--plot scorecard.png]

Columns: each headline metric some run declares (run.json's `task.headline`: key, title, chance), in the order
the tasks declare (`order`); a dataset's report section may give a column of its own kind (Hu et al.'s
item-weighted published cells, LUDWIG's best k). Runs of tasks that declare none (Circa's transfer sources)
have no column.

Rows, in this order:
- `chance`: each column's declared chance level (a paper's own chance row is this row);
- `majority`: the majority-label baseline's runs where there are some; otherwise, per column, what it would
  score on the data our runs read: the share of the test split taken by the training split's most frequent label
  (the first one on a tie), from the `label_counts` of the runs' `data_report.json`; runs on the same data count
  once, several data sets give mean ± std over them;
- published rows: the papers' rows in the columns of their task, named like ours with `(paper)`; the data a
  row's name states (`data.labels=strict`) picks the columns whose runs were made on it and leaves the name,
  other conditions stay (`fid (paper, retriever.top_k=5)`);
- ours: a row per model as its runs declare it (`model.row`: `bert_yn`, `smollm2 0-shot`, `smollm2 lora`; a
  reference backend declares none and is left out), trained models first. The run's model settings
  (`optimizer.lr=0.1`) follow the name and make another row; its task settings (`judge=gpt4`, a data file that is
  not the release's) do not part a row: where a cell's runs share one set it is noted under the table, where a
  column's runs differ in them each other set gets a row named with it.

Cells (pragexp.utils.results.Cell): mean ± its standard error over items (n items) where the runs wrote it, and for
several runs `; sd <their sample std> over <n> runs`; an LLM row with several prompt templates averages each
template's runs first (`over <n> templates`). `–`: no value. A cell whose runs predict one label for more than 90% of
their test items ends in `†`, with the label and its share in a footnote (not the majority baseline's).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from pragexp.report import sections
from pragexp.report.label_shares import collapse_text, mean_shares
from pragexp.report.paper import load_paper
from pragexp.report.runs import Row, Run, group_runs
from pragexp.utils.io import atomic_output
from pragexp.utils.markdown import markdown_table
from pragexp.utils.results import Cell, Column, data_facts, data_report, settings_text, summarise

MISSING = "–"
COLLAPSE_MARK = "†"  # a cell whose runs predict one label for more than 90% of the test items
PAPER_PREFIX = re.compile(r"^table\d+_")  # GRICE's `table5_memnn`: named like our experiments' rows


@dataclass
class ScoreRow:
    name: str
    kind: str  # chance | majority | paper | trained | llm
    cells: dict[str, Cell] = field(default_factory=dict)  # column title -> cell
    # column title -> the task settings of its runs, and what the cell picked (LUDWIG best-k: its k)
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class Scorecard:
    columns: list[Column]
    rows: list[ScoreRow]


def columns_for(runs: list[Run]) -> list[Column]:
    """The headline columns the runs declare, in their declared order; a dataset section's own column where it
    has one."""
    own = {column.title: column for column in sections.columns(runs)}
    found: dict[str, tuple[int, Column]] = {}
    for run in runs:
        for h in run.record.task.headline:
            if h.title not in found:
                facts = data_facts(run.record)
                column = own.get(h.title) or Column(h.title, run.task, h.key, h.chance, facts=facts)
                found[h.title] = (h.order, column)
    return [column for _, column in sorted(found.values(), key=lambda found: found[0])]


def _kind(run: Run) -> str:
    if run.record.model.one_label:  # the majority baseline: one row whatever its settings, never marked
        return "majority"
    return "llm" if run.record.model.llm is not None else "trained"


def _settings(run: Run) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run's model settings (another row) and task settings (they qualify a cell), none for the baseline."""
    if _kind(run) == "majority":
        return (), ()
    declared = run.record.settings
    return tuple(declared.model), (*declared.task, *([run.data_text] if run.data_text else []))


def _score_row(run: Run, column: Column) -> Row | None:
    """The run's row in the column (runs.Row): its model's row name and settings; its task settings aside."""
    name = column.row(run) if column.takes(run) else None
    if name is None:
        return None
    own, task_side = _settings(run)
    return Row(column.title, name, "", None, own, kind=_kind(run), aside=task_side)


def model_rows(runs: list[Run], columns: list[Column]) -> dict[str, list[ScoreRow]]:
    """{kind: rows} of our runs: majority (at most one row), trained, llm, each sorted by name. Task settings
    part a row only where one column's runs differ in them (see the module's docstring)."""
    grouped: dict[tuple, dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for column in columns:
        for row in group_runs(runs, partial(_score_row, column=column)).get(column.title, []):
            grouped[(row.kind, row.name, row.settings)][column.title].append(row)
    out: dict[str, list[ScoreRow]] = defaultdict(list)
    for (kind, name, own), by_column in sorted(grouped.items()):
        row = ScoreRow(name + settings_text(own), kind)
        apart: dict[tuple, ScoreRow] = {}
        for column in columns:
            variants = by_column.get(column.title, [])
            for variant in variants:
                cell = column.cell(variant.runs)
                if cell is None:
                    continue
                if kind != "majority":  # the baseline predicts one label by construction
                    cell = collapse_mark(cell, variant.runs)
                target, noted = row, variant.aside
                if variant.aside and len(variants) > 1:  # a row of its own, named with its settings
                    text = settings_text((*own, *variant.aside))
                    target, noted = apart.setdefault(variant.aside, ScoreRow(name + text, kind)), ()
                target.cells[column.title] = cell
                if noted or cell.note:
                    target.notes[column.title] = ", ".join([*noted, *([cell.note] if cell.note else [])])
        out[kind] += [r for r in (row, *apart.values()) if r.cells]
    return out


def collapse_mark(cell: Cell, runs: list[Run]) -> Cell:
    """The cell, marked where one label takes more than 90% of its runs' test predictions (mean shares
    from their predictions.jsonl or confusion/test.json)."""
    shares = mean_shares(runs)
    return replace(cell, collapse=collapse_text(shares)) if shares and shares.collapsed() else cell


def majority_share(counts: dict) -> float | None:
    """The test share of the training split's most frequent label (the first on a tie); None without
    train and test counts."""
    train, test = counts.get("train"), counts.get("test")
    if not train or not test or not sum(test.values()):
        return None
    majority = max(train, key=lambda label: train[label])  # max keeps the first of equal counts
    return test.get(majority, 0) / sum(test.values())


def majority_row(runs: list[Run], columns: list[Column], from_runs: ScoreRow | None) -> ScoreRow:
    """The majority runs' cells, and for the other columns the majority baseline computed from the data
    reports of the runs in that column (one value per distinct data)."""
    row = from_runs or ScoreRow("majority", "majority")
    for column in columns:
        if column.title in row.cells:
            continue
        per_data: dict[str, float] = {}
        for run in runs:
            counts = data_report(run).get("label_counts") if column.takes(run) else None
            share = majority_share(counts) if counts else None
            if share is not None:
                per_data[json.dumps(counts, sort_keys=True)] = share
        if per_data:
            s = summarise(list(per_data.values()))
            std = s["std"] if s["n"] > 1 else None
            row.cells[column.title] = Cell(s["mean"], std, s["n"], unit="data sets")
    return row


def chance_row(columns: list[Column]) -> ScoreRow:
    return ScoreRow("chance", "chance", {c.title: Cell(c.chance) for c in columns if c.chance is not None})


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
    majority = majority_row(runs, columns, next(iter(ours.get("majority", [])), None))
    rows = [
        chance_row(columns),
        majority,
        *published_rows(columns, runs),
        *ours.get("trained", []),
        *ours.get("llm", []),
    ]
    return Scorecard(columns, rows)


def _cell_text(row: ScoreRow, title: str) -> str:
    cell = row.cells.get(title)
    if cell is None:
        return MISSING
    return cell.text + (f" {COLLAPSE_MARK}" if cell.collapse else "")


def markdown(card: Scorecard) -> str:
    header = ["model", *(c.title for c in card.columns)]
    lines = [[row.name, *(_cell_text(row, c.title) for c in card.columns)] for row in card.rows]
    notes = [f"{row.name}, {title}: {text}" for row in card.rows for title, text in row.notes.items()]
    covers = [f"{column.title}: {column.note}" for column in card.columns if column.note]
    collapsed = [
        f"{row.name}, {title}: {cell.collapse}"
        for row in card.rows
        for title, cell in row.cells.items()
        if cell.collapse
    ]
    return "\n".join(
        [
            "## Scorecard",
            "",
            *markdown_table(header, lines),
            "",
            "Test scores as fractions. Ours: mean ± its standard error over items (n items), where the runs "
            "wrote it; over several runs, or prompt templates for an LLM row with several, their mean, then `sd` "
            "their sample std (`pop. sd`: population std). chance: a uniform guess; majority: model=majority runs, else the training "
            "split's most frequent label scored on the test split (data_report.json); (paper): published. "
            f"{MISSING}: no value.",
            *(["", "Columns: " + "; ".join(covers) + "."] if covers else []),
            *(["", "Task settings of a cell's runs: " + "; ".join(notes) + "."] if notes else []),
            *(
                [
                    "",
                    f"{COLLAPSE_MARK} One label takes more than 90% of the cell's test predictions: "
                    + "; ".join(collapsed)
                    + ".",
                ]
                if collapsed
                else []
            ),
            "",
        ]
    )


def _colors(rows: list[ScoreRow]) -> dict[str, tuple]:
    """A color per row: ours from tab10 then tab20, the papers' from tab20b and tab20c, so that a published
    bar never takes the color of one of ours."""
    from matplotlib import colormaps

    ours = [*colormaps["tab10"].colors, *colormaps["tab20"].colors[1::2]]
    papers = [*colormaps["tab20b"].colors, *colormaps["tab20c"].colors[:16]]
    out, counts = {}, {"paper": 0, "ours": 0}
    for row in rows:
        side, palette = ("paper", papers) if row.kind == "paper" else ("ours", ours)
        out[row.name] = palette[counts[side] % len(palette)]
        counts[side] += 1
    return out


def plot(card: Scorecard, out: Path) -> bool:
    """Grouped bars: a group per column, a bar per row with a value there (published ones hatched), the 95%
    interval over items as an error bar where the runs wrote it, chance as a dashed line across its group. A matplotlib Figure without pyplot,
    written atomically. False when no row but chance has a value."""
    from matplotlib.figure import Figure

    bars = [row for row in card.rows if row.kind != "chance" and row.cells]
    if not bars:
        return False
    chance = next((row for row in card.rows if row.kind == "chance"), ScoreRow("chance", "chance"))
    color = _colors(bars)
    most = max(sum(c.title in row.cells for row in bars) for c in card.columns)
    width = 0.8 / max(most, 4)  # the same for every bar: a lone bar does not fill its group
    fig = Figure(figsize=(max(8.0, 0.12 * max(most, 4) * len(card.columns) + 2), 5.0))
    ax = fig.subplots()
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    labelled: set[str] = set()
    chance_label = "chance"
    for j, column in enumerate(card.columns):
        here = [row for row in bars if column.title in row.cells]
        for i, row in enumerate(here):
            cell = row.cells[column.title]
            ax.bar(
                j + (i - (len(here) - 1) / 2) * width,
                cell.mean,
                width,
                yerr=cell.half,  # the 95% interval over items, where the runs wrote it
                capsize=1.5,
                color=color[row.name],
                hatch="//" if row.kind == "paper" else None,
                edgecolor="white" if row.kind == "paper" else None,
                label=None if row.name in labelled else row.name,
            )
            labelled.add(row.name)
        if column.title in chance.cells:
            half = max(len(here), 1) * width / 2 + 0.05
            ax.hlines(
                chance.cells[column.title].mean,
                j - half,
                j + half,
                colors="black",
                linestyles="--",
                label=chance_label,
                zorder=3,
            )
            chance_label = None
    ax.set_xticks(range(len(card.columns)), [c.title for c in card.columns], rotation=20, ha="right")
    ax.set_xlim(-0.5, len(card.columns) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("test score (fraction)")
    ax.set_title("Scorecard (hatched: published)")
    order = {name: i for i, name in enumerate(["chance", *(row.name for row in bars)])}
    handles = sorted(zip(*ax.get_legend_handles_labels(), strict=True), key=lambda h: order[h[1]])
    ax.legend(
        *zip(*handles, strict=True), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=4
    )
    with atomic_output(out, binary=True) as f:  # no tight_layout: the legend below keeps the axes as drawn
        fig.savefig(f, format="png", dpi=120, bbox_inches="tight")
    return True
