"""LUDWIG in pragexp.report: accuracy per template and k, the k curve and the scorecard's two columns (this
package's paper.json holds the paper's numbers).

- Table: each template's mean over its runs per model and k (± its standard error over items, n items), and
  over the templates their mean with the items' figures and their population std (`pop. sd`), as the paper
  reports its score (`np.std`); the paper's cells at their k. Per implicature type where the runs have
  `test/acc/<type>`.
- "LUDWIG 0-shot acc": the runs at prompt.shots=0. "LUDWIG best-k acc": across an LLM's runs of every k (its
  0-shot row), the k whose mean over the templates is highest (named in the cell's note; a tie goes to the
  smaller k). A published row: its highest published k > 0; people, whom k does not apply to, in both columns.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from pragexp.reporting.figures import legend_below, pyplot, save_png
from pragexp.reporting.markdown import stats_text, table_section
from pragexp.reporting.papers import read_paper_table
from pragexp.reporting.results import (
    Cell,
    Column,
    config_value,
    llm_label,
    metric_suffixes,
    parse_row_name,
    population_cell,
    runs_cell,
    shots,
    template_name,
)
from pragexp.runs.record import llm_row

TASK = "ludwig"
PAPER = Path(__file__).resolve().parent / f"{TASK}.json"
KS = (0, 1, 5, 10, 15, 30)  # the paper's k
PEOPLE = ("human", "human_average", "human_best")
SHOTS = "prompt.shots="
TYPES_FILE = ("data.types_file",)  # which per-type cells a run has: no other model, no other accuracy


def published_rows() -> dict[str, dict]:
    return (read_paper_table(PAPER, TASK) or {"rows": {}})["rows"]


def published_shots(conditions) -> int | None:
    """The k of a published row's name (`prompt.shots=30`); None where k does not apply (people)."""
    found = [int(c[len(SHOTS) :]) for c in conditions if c.startswith(SHOTS)]
    return found[0] if found else None


def groups(runs) -> dict[str, dict[int, list]]:
    """{model label: {k: runs}} of the LUDWIG runs."""
    out: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.task == TASK:
            out[llm_label(run, TYPES_FILE)][shots(run)].append(run)
    return {label: dict(sorted(by_k.items())) for label, by_k in sorted(out.items())}


def templates(runs) -> list[str]:
    """The templates of the runs, in the order of their prompt group (then by name)."""
    found = {template_name(r) for r in runs if r.task == TASK}
    order: list[str] = []
    for run in runs:
        for t in config_value(run.config, "prompt.templates") or []:
            if isinstance(t, dict) and t.get("name") in found and t["name"] not in order:
                order.append(t["name"])
    return [*order, *sorted(found - set(order))]


def _cell_text(cell: Cell | None) -> str:
    return cell.text if cell is not None else ""


def sections(runs) -> list[str]:
    found = groups(runs)
    if not found:
        return []
    names = templates(runs)
    lines = []
    for label, by_k in found.items():
        for k, group in by_k.items():
            per = [
                _cell_text(runs_cell([r for r in group if template_name(r) == t], "test/acc")) for t in names
            ]
            lines.append([label, str(k), *per, _cell_text(population_cell(group, "test/acc"))])
    for key, values in published_rows().items():
        name, conditions = parse_row_name(key)
        k = published_shots(conditions)
        blank = [""] * len(names)
        lines.append(
            [f"{name} (paper)", "–" if k is None else str(k), *blank, stats_text(values.get("test/acc"))]
        )
    out = ["## LUDWIG (Ruis et al. 2023): implicature resolution", "", "### Accuracy per template and k", ""]
    out += [
        "Ours: each template's mean over its runs ± its standard error over items (n items); over the "
        "templates, "
        "their mean, the items' figures and `pop. sd` their population std, as the paper reports it.",
        "",
    ]
    out += table_section(None, ["model", "k", *names, "templates"], lines)
    types = metric_suffixes([r for by_k in found.values() for g in by_k.values() for r in g], "test/acc/")
    if types:
        out += table_section(
            "Accuracy per implicature type (over templates, as above)",
            ["model", "k", *types],
            [
                [label, str(k), *(_cell_text(population_cell(group, f"test/acc/{t}")) for t in types)]
                for label, by_k in found.items()
                for k, group in by_k.items()
            ],
        )
    return out


def figures(runs, folder: Path) -> list[Path]:
    """`ludwig_k.png`, accuracy against k: a line per model, its 95% interval over items as error bars (where
    the runs wrote it) and the templates' population std as a band, the paper's models as markers, people's
    average and best as solid lines, chance 0.5 dashed."""
    found = groups(runs)
    if not found:
        return []
    fig, ax = pyplot().subplots(figsize=(7.5, 4.5))
    for label, by_k in found.items():
        cells = {k: population_cell(g, "test/acc") for k, g in by_k.items()}
        ks = [k for k, c in cells.items() if c is not None]
        means, spread = [cells[k].mean for k in ks], [cells[k].std or 0.0 for k in ks]
        errors = [cells[k].half if cells[k].half is not None else float("nan") for k in ks]
        line = ax.errorbar(ks, means, yerr=errors, marker="o", capsize=2, label=label).lines[0]
        lower = [m - s for m, s in zip(means, spread, strict=True)]
        upper = [m + s for m, s in zip(means, spread, strict=True)]
        ax.fill_between(ks, lower, upper, color=line.get_color(), alpha=0.2)
    published: dict[str, dict[int, float]] = defaultdict(dict)
    for key, values in published_rows().items():
        name, conditions = parse_row_name(key)
        k = published_shots(conditions)
        if name in PEOPLE:
            color = "black" if name == "human_best" else "grey"
            ax.axhline(values["test/acc"], color=color, label=f"{name} (paper)")
        elif k is not None:
            published[name][k] = values["test/acc"]
    for name, by_k in published.items():
        ax.plot(list(by_k), list(by_k.values()), marker="s", linestyle="none", label=f"{name} (paper)")
    ax.axhline(0.5, color="black", linestyle="--", label="chance")
    ax.set_xticks(KS)
    ax.set_xlabel("k (prompt.shots)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0.3, 1.0)
    ax.set_title("LUDWIG: accuracy against k (bars: 95% interval over items; band: pop. sd over templates)")
    legend_below(fig, ax, 7.5, 4.5)
    return [save_png(fig, Path(folder) / "ludwig_k.png")]


@dataclass(frozen=True)
class ZeroShotColumn(Column):
    """LUDWIG at k = 0 (the runs at k = 0 declare it): mean ± population std over the templates."""

    def cell(self, runs) -> Cell | None:
        return population_cell(runs, self.metric)

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        return [
            (name, tuple(c for c in rest if not c.startswith(SHOTS)), cell)
            for name, rest, cell in super().published(rows)
            if published_shots(rest) in (None, 0)
        ]


@dataclass(frozen=True)
class BestKColumn(Column):
    """LUDWIG at the best k: the k whose mean over the templates is highest."""

    def row(self, run) -> str | None:
        """A prompted LLM's 0-shot row, whatever the run's k: the cell picks among k."""
        model = run.record.model
        return llm_row(model.llm.name, 0, model.tuning) if model.llm else model.row

    def cell(self, runs) -> Cell | None:
        by_k: dict[int, list] = {}
        for run in runs:
            by_k.setdefault(shots(run), []).append(run)
        cells = {k: population_cell(group, self.metric) for k, group in sorted(by_k.items())}
        found = [(cell.mean, -k, k, cell) for k, cell in cells.items() if cell is not None]
        if not found:
            return None
        *_, k, cell = max(found, key=lambda f: f[:2])
        return replace(cell, note=f"{SHOTS}{k} (the best k)")

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        best: dict[tuple[str, tuple[str, ...]], Cell] = {}
        for name, rest, cell in super().published(rows):
            k = published_shots(rest)
            if k == 0:  # the 0-shot column's: a row's other k are not all transcribed, so pick among k > 0
                continue
            key = (name, tuple(c for c in rest if not c.startswith(SHOTS)))
            cell = cell if k is None else replace(cell, note=f"{SHOTS}{k} (the highest published k)")
            if key not in best or cell.mean > best[key].mean:
                best[key] = cell
        return [(name, rest, cell) for (name, rest), cell in best.items()]


def columns(runs) -> list[Column]:
    if not any(run.task == TASK for run in runs):
        return []
    spread = "mean ± population std across templates, as the paper reports it"
    best = (
        "the k whose mean over the templates is highest (its prompt.shots noted per cell), "
        "mean ± population std across its templates; (paper): the highest published k > 0"
    )
    return [
        ZeroShotColumn("LUDWIG 0-shot acc", TASK, "test/acc", chance=0.5, note=spread),
        BestKColumn("LUDWIG best-k acc", TASK, "test/acc", chance=0.5, note=best),
    ]
