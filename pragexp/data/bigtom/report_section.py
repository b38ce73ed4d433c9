"""BigToM in pragexp.report (the task declares this module): true belief, false belief and both together per
question and initial belief beside the paper's rows, the controls, the whole run, and a figure of the first.

- Tables: a row per run and question (forward belief, forward action, backward belief), with the initial
  belief shown and hidden: the true-belief and false-belief accuracy
  (`test/acc/<init>_<question>_<condition>`) and both right together
  (`test/joint_acc/<question>:<initial_belief|no_initial_belief>`, the paper's TB∧FB); then the paper's rows
  (bigtom.json: Fig. 3, the initial belief shown, TB and TB∧FB; the false belief alone is not printed there,
  an empty cell); then the controls; then per run all items, all true-and-false pairs, percept-to-belief, the
  share of each answer position chosen and `unparsed`, and what answering a) (or b)) every time scores on the
  run's data: the authors' answer order is drawn once per story row and holds in every condition, so a story's
  true-belief and false-belief items have their right answer in the same position, and one position every time
  scores the share of pairs whose right answers sit there (about 1/2, not the 1/4 of a uniform guess). Each
  cell of ours `mean ± standard error (n=stories)` from metrics.json, clustered by story (a story's 25 items
  are one draw). Chance: 1/2 an item, 1/4 a pair.
"""

from __future__ import annotations

from pathlib import Path

from pragexp.data.bigtom.datamodule import POSITIONS, SHOWN
from pragexp.reporting.figures import bar_groups, pyplot, save_png
from pragexp.reporting.groups import figure_cell, figure_estimate, run_label
from pragexp.reporting.markdown import table_section
from pragexp.reporting.papers import read_paper_table
from pragexp.reporting.results import Column, data_report

TASK = "bigtom"
PAPER = Path(__file__).resolve().parent / f"{TASK}.json"
QUESTIONS = ("forward_belief", "forward_action", "backward_belief")
JOINT = "test/joint_acc"
CHANCE, PAIR_CHANCE = 0.5, 0.25  # two answers; both of a pair by guessing
SHOWN_FIRST = (1, 0)  # the initial belief shown (the paper's Fig. 3), then hidden


def own_runs(runs) -> list:
    return sorted((r for r in runs if r.task == TASK), key=lambda r: (run_label(r), str(r.path)))


def published() -> tuple[dict[str, dict], dict[str, str]]:
    """The paper's rows ({name: {metrics key: value}}) and where each comes from."""
    table = read_paper_table(PAPER, TASK) or {}
    return table.get("rows", {}), table.get("row_sources", {})


def belief_cells(run, question: str, initial: int) -> list[str]:
    """True belief, false belief and both, for a question with the initial belief shown (1) or hidden (0)."""
    own = [figure_cell(run, f"{initial}_{question}_{c}") for c in ("true_belief", "false_belief")]
    return [*own, figure_cell(run, f"{question}:{SHOWN[initial]}", JOINT)]


def belief_rows(runs) -> list[list[str]]:
    rows = [
        [run_label(run), _words(q), *(c for i in SHOWN_FIRST for c in belief_cells(run, q, i))]
        for run in runs
        for q in QUESTIONS
    ]
    paper, _ = published()
    for name, cells in paper.items():
        for q in QUESTIONS:
            tb, both = cells.get(f"test/acc/1_{q}_true_belief"), cells.get(f"{JOINT}/{q}:{SHOWN[1]}")
            rows.append([f"{name} (paper)", _words(q), _number(tb), "", _number(both), "", "", ""])
    chance = [f"{CHANCE:.3f}", f"{CHANCE:.3f}", f"{PAIR_CHANCE:.3f}"]
    return [*rows, ["chance", "", *chance, *chance]]


def control_rows(runs) -> list[list[str]]:
    rows = [
        [run_label(run), _words(q)]
        + [figure_cell(run, f"{i}_{q}_{c}") for i in SHOWN_FIRST for c in ("true_control", "false_control")]
        for run in runs
        for q in QUESTIONS
    ]
    rows = [row for row in rows if any(row[2:])]  # a run without control items has no row
    return [*rows, ["chance", "", *[f"{CHANCE:.3f}"] * 4]] if rows else []


def constant_rows(runs) -> list[list[str]]:
    """What answering one position every time scores on each run's data (data_report.json): the authors' order
    is a story's in every condition, so a pair's two right answers share their position."""
    rows, seen = [], set()
    for run in runs:
        report = data_report(run)
        items, pairs = report.get("items"), report.get("joint_sets")
        first = report.get("joint_sets_right_first")
        key = (report.get("source"), items, pairs)
        if not items or first is None or key in seen:
            continue
        seen.add(key)
        where = f"{Path(str(report.get('source'))).name}, {items} items"
        for p, position in enumerate(POSITIONS):
            share = report.get("per_right_position", {}).get(position, 0) / items
            pair_share = (first if p == 0 else pairs - first) / pairs if pairs else None
            rows.append([f"always {position}) ({where})", _number(share), _number(pair_share), *[""] * 5])
    return rows


def overall_rows(runs) -> list[list[str]]:
    rows = []
    for run in runs:
        cells = [
            figure_cell(run),
            figure_cell(run, "all", JOINT),
            figure_cell(run, "1_percept_to_belief_true_belief"),
        ]
        # the shares of each position chosen and of replies read as none, each with its interval where written
        shares = [figure_cell(run, p, "test/chosen") for p in (*POSITIONS, "none")]
        rows.append([run_label(run), *cells, *shares, figure_cell(run, None, "test/unparsed")])
    chance = ["chance", f"{CHANCE:.3f}", f"{PAIR_CHANCE:.3f}", f"{CHANCE:.3f}", "", "", "", ""]
    return [*rows, chance, *constant_rows(runs)]


def sections(runs) -> list[str]:
    ours = own_runs(runs)
    if not ours:
        return []
    _, sources = published()
    out = ["## BigToM (Gandhi et al. 2023): theory of mind in stories", ""]
    out += [
        "Accuracy: mean ± standard error clustered by story (n=stories: a story's 25 items are one draw); "
        "TB∧FB: "
        "a story's true-belief and false-belief items both right. (paper): the authors' notebook "
        "(bigtom.json), "
        "the initial belief shown, 0-shot, on the release's stories; FB alone is not printed there.",
        "",
    ]
    shown, hidden = (f"({'shown' if i else 'hidden'})" for i in SHOWN_FIRST)
    header = [f"{name} {when}" for when in (shown, hidden) for name in ("TB", "FB", "TB∧FB")]
    out += table_section(
        "True belief, false belief and both, initial belief shown or hidden (the paper's Fig. 3: shown)",
        ["model, template", "question", *header],
        belief_rows(ours),
    )
    header = [f"{name} {when}" for when in (shown, hidden) for name in ("true control", "false control")]
    controls = control_rows(ours)
    out += table_section("Controls", ["model, template", "question", *header], controls) if controls else []
    header = ["all items", "all TB∧FB pairs", "percept to belief", *(f"chose {p})" for p in POSITIONS)]
    out += table_section(
        "All items", ["model, template", *header, "chose none", "unparsed"], overall_rows(ours)
    )
    out += [f"- {name} (paper): {source}" for name, source in sources.items()] + [""]
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`bigtom_belief.png`: a panel per run (true belief, false belief and both, the initial belief shown,
    with their 95% intervals) and one of the paper's rows (TB∧FB), a cluster per question."""
    ours = own_runs(runs)
    if not ours:
        return []
    plt = pyplot()
    fig, axes = plt.subplots(len(ours) + 1, 1, figsize=(7.5, 2.9 * (len(ours) + 1)), squeeze=False)
    xs = [_words(q) for q in QUESTIONS]
    for ax, run in zip(axes[:-1, 0], ours, strict=True):
        found = {
            "true belief": [figure_estimate(run.metrics, f"1_{q}_true_belief") for q in QUESTIONS],
            "false belief": [figure_estimate(run.metrics, f"1_{q}_false_belief") for q in QUESTIONS],
            "TB∧FB": [figure_estimate(run.metrics, f"{q}:{SHOWN[1]}", JOINT) for q in QUESTIONS],
        }
        series = [
            (label, [m for m, _ in v], [0.0 if e != e else e for _, e in v], {}) for label, v in found.items()
        ]
        bar_groups(ax, xs, series, "accuracy")
        ax.axhline(CHANCE, color="grey", linestyle=":", linewidth=1, label="chance (item)")
        ax.axhline(PAIR_CHANCE, color="black", linestyle="--", linewidth=1, label="chance (TB∧FB)")
        ax.set_title(run_label(run), fontsize=8)
        ax.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    paper, _ = published()
    ax = axes[-1, 0]
    series = [
        (name, [cells.get(f"{JOINT}/{q}:{SHOWN[1]}", float("nan")) for q in QUESTIONS], None, {"hatch": "//"})
        for name, cells in paper.items()
    ]
    bar_groups(ax, xs, series, "TB∧FB")
    ax.axhline(PAIR_CHANCE, color="black", linestyle="--", linewidth=1)
    ax.set_title("the paper's TB∧FB (bigtom.json: Fig. 3, 0-shot, the release's stories)", fontsize=8)
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.12))
    fig.suptitle("BigToM: initial belief shown (whiskers: 95% interval, clustered by story)", fontsize=10)
    return [save_png(fig, Path(folder) / "bigtom_belief.png")]


def columns(runs) -> list[Column]:
    """No scorecard column of its own: each headline column is its metric's mean over the runs."""
    return []


def _words(name: str) -> str:
    return name.replace("_", " ")


def _number(value) -> str:
    return "" if value is None else f"{value:.3f}"
