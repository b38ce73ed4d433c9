"""Hu et al. 2022 in pragexp.report: the accuracy per phenomenon, the errors by distractor kind, the figure in
the paper's style and the scorecard's column (this package's paper.json holds the paper's numbers).

- Table: a row per model. Ours: the LLM (and its settings), template and k, the mean ± its standard error over
  items (clustered over the option orders) and n items, for several runs their sample std apart (Cell); the
  paper's models and chance; people: the paper's `human` row and, where a run's data_report.json has
  `human_accuracy`, the people's answers of our data. "all": ours `test/acc`; a published row's item-weighted
  mean over the phenomena our runs cover. Then our runs' error shares by distractor kind
  (`error_share/<kind>`), `human_corr` and the option orders' population std (`acc_view_std`).
- Scorecard "Hu et al. acc": a published row's cell is its item-weighted mean over the phenomena the column's
  runs cover (those with items in their data_report.json's `per_phenomenon`; all seven when no run says), so
  that a run on five phenomena is compared on the same five. Chance: the item-weighted mean of 1/options.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pragexp.reporting.figures import bar_groups, pyplot, save_png
from pragexp.reporting.markdown import stats_text, table_section
from pragexp.reporting.papers import read_paper_data, read_paper_table
from pragexp.reporting.results import (
    CHANCE_ROWS,
    Cell,
    Column,
    data_report,
    llm_label,
    mean_of,
    metric_suffixes,
    parse_row_name,
    runs_cell,
    shots,
    template_name,
)

TASK = "hu_pragmatics"
PAPER = Path(__file__).resolve().parent / f"{TASK}.json"
PEOPLE = ("human", "human_average", "human_best")
SPREAD_TITLE = (
    "Errors by distractor kind (share of the wrong answers), correlation with people and the spread over "
    "option "
    "orders"
)


def published_rows() -> dict[str, dict]:
    return (read_paper_table(PAPER, TASK) or {"rows": {}})["rows"]


def counts() -> tuple[dict[str, float], dict[str, float]]:
    """The paper's items and options per phenomenon."""
    return read_paper_data(PAPER, "items"), read_paper_data(PAPER, "options")


def covered_phenomena(runs) -> set[str]:
    """The phenomena with items in the runs' data_report.json (empty: no run says)."""
    found: set[str] = set()
    for run in runs:
        if run.task == TASK:
            found |= {p for p, n in (data_report(run).get("per_phenomenon") or {}).items() if n}
    return found


def weighted_mean(values: dict[str, float], weights: dict[str, float], keys) -> float | None:
    """Σ weight·value / Σ weight over `keys`; None where a key has no value or no weight."""
    if not keys or any(values.get(k) is None or not weights.get(k) for k in keys):
        return None
    return sum(weights[k] * values[k] for k in keys) / sum(weights[k] for k in keys)


def groups(runs) -> dict[tuple[str, str, int], list]:
    """{(model label, template, k): runs} of the Hu runs."""
    out: dict[tuple[str, str, int], list] = defaultdict(list)
    for run in runs:
        if run.task == TASK:
            out[llm_label(run), template_name(run), shots(run)].append(run)
    return dict(sorted(out.items()))


def phenomena(runs, items: dict[str, float]) -> list[str]:
    """The paper's phenomena, then any other our runs have."""
    ours = metric_suffixes([r for r in runs if r.task == TASK], "test/acc/")
    return [*items, *(p for p in ours if p not in items)]


def people_from_data(runs) -> list[tuple[dict, dict]]:
    """(human_accuracy, per_phenomenon) of each distinct data with people's answers our runs read."""
    found = {}
    for run in runs:
        report = data_report(run) if run.task == TASK else {}
        if report.get("human_accuracy"):
            pair = (report["human_accuracy"], report.get("per_phenomenon") or {})
            found[repr(sorted(pair[0].items()))] = pair
    return list(found.values())


def hu_rows(runs) -> tuple[list[str], list[list[str]]]:
    """The header and rows of the per-phenomenon table (ours, the paper's, people from our data)."""
    items, _ = counts()
    shown = phenomena(runs, items)
    found = covered_phenomena(runs)
    covered = [p for p in items if p in found] if found else list(items)
    lines = []
    for (label, template, k), group in groups(runs).items():
        cells = [_text(runs_cell(group, f"test/acc{p}")) for p in [*(f"/{p}" for p in shown), ""]]
        lines.append([label, template, str(k), str(len(group)), *cells])
    for key, values in published_rows().items():
        name, _ = parse_row_name(key)
        cells = {p: values.get(f"test/acc/{p}") for p in shown}
        setting = ["", ""] if name in (*PEOPLE, *CHANCE_ROWS) else ["authors", "0"]
        lines.append(
            [f"{name} (paper)", *setting, "", *(stats_text(cells[p]) for p in shown)]
            + [stats_text(weighted_mean(cells, items, covered))]
        )
    for accuracy, per in people_from_data(runs):
        own = [p for p in shown if p in accuracy]
        lines.append(
            ["people (our data)", "", "", "", *(stats_text(accuracy.get(p)) for p in shown)]
            + [stats_text(weighted_mean(accuracy, per, own))]
        )
    return ["model", "template", "k", "runs", *shown, "all"], lines


def _text(cell) -> str:
    return cell.text if cell is not None else ""


def sections(runs) -> list[str]:
    found = groups(runs)
    if not found:
        return []
    out = ["## Hu et al. 2022: pragmatic phenomena", "", "### Accuracy per phenomenon", ""]
    out += [
        "Ours: mean ± its standard error over items, clustered by item over the option orders (n items), and "
        "over several runs `sd` their sample std (the spread over option orders: the next table); (paper): "
        "zero-shot, the authors' protocol, mean over 5 seeds; all: ours `test/acc`, the others "
        "item-weighted over the phenomena our runs cover.",
        "",
    ]
    out += table_section(None, *hu_rows(runs))
    ours = [r for g in found.values() for r in g]
    kinds = metric_suffixes(ours, "test/error_share/")
    extra = ("test/human_corr", "test/acc_view_std")
    if kinds or any(key in r.metrics for r in ours for key in extra):
        out += table_section(
            SPREAD_TITLE,
            ["model", "template", "k", *kinds, "human_corr", "option orders sd"],
            [
                [label, template, str(k)]
                + [_text(runs_cell(g, f"test/error_share/{kind}")) for kind in kinds]  # ± over units
                + [stats_text(mean_of(g, key)) for key in extra]  # r has its own interval; sd is a spread
                for (label, template, k), g in found.items()
            ],
        )
    return out


def _bars(runs, shown: list[str]) -> list[tuple[str, dict, dict]]:
    """(label, {phenomenon: (mean, std)}, bar style) of ours, the paper's models and people."""
    bars = [
        (
            f"{label} ({template}, k={k})",
            {p: _bar(runs_cell(g, f"test/acc/{p}")) for p in shown},
            {},
        )
        for (label, template, k), g in groups(runs).items()
    ]
    for key, values in published_rows().items():
        name, _ = parse_row_name(key)
        if name != "chance":
            style = {"color": "black"} if name in PEOPLE else {"hatch": "//", "edgecolor": "white"}
            bars.append((f"{name} (paper)", {p: (values.get(f"test/acc/{p}"), None) for p in shown}, style))
    for accuracy, _ in people_from_data(runs):
        bars.append(("people (our data)", {p: (accuracy.get(p), None) for p in shown}, {"color": "grey"}))
    return bars


def _bar(cell) -> tuple[float | None, float | None]:
    """(height, error bar: the 95% interval over items where the runs wrote it)."""
    return (cell.mean, cell.half) if cell is not None else (None, None)


def figures(runs, folder: Path) -> list[Path]:
    """`hu_pragmatics_phenomena.png`: a group of bars per phenomenon, a bar per model (ours with their 95%
    interval over items as error bars, the paper's hatched) and people (black and grey), chance dashed across
    each group."""
    if not groups(runs):
        return []
    items, options = counts()
    shown = phenomena(runs, items)
    bars = _bars(runs, shown)
    fig, ax = pyplot().subplots(figsize=(max(8.0, 1.4 * len(shown)), 4.2 + 0.15 * len(bars)))
    series = []
    for label, cells, style in bars:
        ys = [cells[p][0] if cells[p][0] is not None else float("nan") for p in shown]
        errors = [cells[p][1] or 0.0 for p in shown]
        series.append((label, ys, errors if any(errors) else None, style))
    bar_groups(ax, shown, series, "accuracy", rotation=15)
    for j, p in enumerate(shown):
        if p in options:
            label = "chance" if j == 0 else None
            ax.hlines(
                1 / options[p], j - 0.45, j + 0.45, colors="black", linestyles="--", label=label, zorder=3
            )
    ax.set_title("Hu et al. 2022: accuracy per phenomenon (hatched: published)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return [save_png(fig, Path(folder) / "hu_pragmatics_phenomena.png")]


@dataclass(frozen=True)
class HuColumn(Column):
    covered: tuple[str, ...] = ()  # the phenomena a published cell averages over
    items: tuple[float, ...] = ()  # the paper's item count of each

    def published(self, rows: dict[str, dict]) -> list[tuple[str, tuple[str, ...], Cell]]:
        """Each published row's item-weighted mean over the covered phenomena (none where it lacks one)."""
        weights = dict(zip(self.covered, self.items, strict=True))
        out = []
        for key, cells in rows.items():
            name, conditions = parse_row_name(key)
            mean = weighted_mean({p: cells.get(f"test/acc/{p}") for p in self.covered}, weights, self.covered)
            if mean is not None and name not in CHANCE_ROWS:  # the chance row shows the paper's chance
                out.append((name, tuple(sorted(conditions)), Cell(mean)))
        return out


def columns(runs) -> list[Column]:
    """The Hu column over the phenomena the runs cover, its chance level and note to match."""
    if not any(run.task == TASK for run in runs):
        return []
    items, options = counts()
    found = covered_phenomena(runs)
    covered = tuple(p for p in items if p in found) if found else tuple(items)
    chance = weighted_mean({p: 1 / options[p] for p in options}, items, covered)
    said = "the runs' data_report.json" if found else "no run's data_report.json says: all of them"
    extra = sorted(found - set(items))
    note = (
        "(paper) rows and chance are the item-weighted mean over "
        + ", ".join(f"{p} ({items[p]:g} items)" for p in covered)
        + f" ({said})"
        + (f"; not in the paper: {', '.join(extra)}" if extra else "")
    )
    weights = tuple(items[p] for p in covered)
    return [
        HuColumn("Hu et al. acc", TASK, "test/acc", chance=chance, note=note, covered=covered, items=weights)
    ]
