"""The markdown report (docs/reports.md): per task, our rows beside the cells of the paper file its task
declares (pragexp.reporting.papers), generated answers beside log-likelihood ones, and the per-group
figure."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from pragexp.metrics.choice_figures import CHOICE_FIGURES
from pragexp.metrics.uncertainty import is_uncertainty_key
from pragexp.report.label_shares import shares_section
from pragexp.report.runs import Row, Run, group_runs
from pragexp.reporting.figures import bar_groups, legend_below, pyplot, save_png
from pragexp.reporting.markdown import table_section
from pragexp.reporting.papers import STAGES, family, read_paper_data, read_paper_table
from pragexp.reporting.results import parse_row_name, published_value, runs_cell

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
HIDDEN_METRICS = ("count", "loss")
CELLS = (
    "- Ours: mean ± its standard error over items (n items), where the runs wrote it; over several seeds (or "
    "folds) their mean, then `sd` their sample std, and [min, max] when a row has more than 3 runs."
)
GENERATION = ("unparsed", "forced", "reasoning_tokens")  # of pragexp.metrics.generation's figures
GENERATION_CAPTION = (
    "unparsed: share of items the rules could not read (wrong unless the extractor read them); forced: share "
    "whose reasoning hit "
    "`prompt.reasoning_budget`; reasoning_tokens: their mean per item."
)


def paper_file(record) -> Path | None:
    """The paper file a run's task declares (run.json's `task.paper`), in its dataset's package."""
    return DATA_DIR / record.data.dataset / record.task.paper if record.task.paper else None


def paper_files(paper_dir: Path | None = None, runs=()) -> list[Path]:
    """The paper files the runs' tasks declare; without such runs, every dataset's (or `paper_dir`'s
    *.json)."""
    declared = {paper_file(run.record) for run in runs} - {None}
    if declared:
        return sorted(declared)
    if paper_dir:
        return sorted(Path(paper_dir).glob("*.json"))
    return sorted(p for p in DATA_DIR.glob("*/*.json") if p.stem == p.parent.name)


def load_paper(task: str, paper_dir: Path | None = None, runs=()) -> dict:
    """The table of the paper file that covers `task` (pragexp.reporting.papers); {"rows": {}} for none."""
    tables = (read_paper_table(path, task) for path in paper_files(paper_dir, runs))
    return next((table for table in tables if table is not None), {"rows": {}})


def paper_data(paper: str, name: str, paper_dir: Path | None = None) -> dict:
    """The `name` entry of the "data" section of a dataset's paper file: `paper_data("grice",
    "implicature_types")` is GRICE's Table 4, {"train": {"explicit": 0.273, ...}, "dev": {...}}."""
    return read_paper_data(Path(paper_dir or DATA_DIR / paper) / f"{paper}.json", name)


def matching_paper_row(row: Row, paper: dict) -> str | None:
    """The paper row of `row` with the most conditions: named by its experiment, name or model, each condition
    (`data.labels=strict`) on the row's command line or in run.json's `task.paper_settings`."""
    recorded = row.runs[0].record.task.paper_settings if row.runs else {}
    holding = {*row.settings, *(f"{k}={v}" for k, v in recorded.items() if v is not None)}
    best, most = None, -1
    for key in paper.get("rows", {}):
        name, conditions = parse_row_name(key)
        holds = all(c in holding for c in conditions)
        if name in (row.experiment, row.name, row.model) and holds and len(conditions) > most:
            best, most = key, len(conditions)
    return best


def paper_row(row: Row, paper: dict) -> dict:
    """The paper's cells for a row ({} when no paper row applies)."""
    key = matching_paper_row(row, paper)
    return paper["rows"][key] if key else {}


def is_overall(key: str) -> bool:
    parts = key.split("/")
    overall = len(parts) == 2 and parts[0] in STAGES and parts[1] not in HIDDEN_METRICS
    return overall and not is_uncertainty_key(key)


def is_split(key: str) -> bool:
    parts = key.split("/")
    return len(parts) == 3 and parts[0] == "test" and not is_uncertainty_key(key)  # a figure is no column


def undeclared_figures(rows: list[Row]) -> set[str]:
    """The means every LLM choice task reports (`metrics.choice_figures`) that no run of the task declares as
    a headline: metrics.json holds them, a table shows them only where a task's config asks (`declares:`)."""
    declared = {h.key.split("/")[1] for row in rows for r in row.runs for h in r.record.task.headline}
    return {figure.name for figure in CHOICE_FIGURES} - declared


def collapsed(key: str) -> str:
    stage, metric, *rest = key.split("/")
    return "/".join([stage, family(metric), *rest])


class _Columns:
    """The columns of one table, by stage, then in the paper's order; keys that differ only in a cut-off
    (`r@1`, `r@5`) share a column `r@k` where the rows' cut-offs differ and no row has two of them."""

    def __init__(self, rows_keys: list[set[str]], paper_order: list[str]):
        behind = Counter(collapsed(key) for key in set().union(*rows_keys))  # name -> how many distinct keys
        # a key keeps its own column where it is its name's only key or a row has two keys of its name
        self.apart = {name for name, count in behind.items() if count == 1}
        for keys in rows_keys:
            names = [collapsed(key) for key in keys]
            self.apart |= {name for name in names if names.count(name) > 1}
        rank = {c: i for i, c in enumerate(dict.fromkeys(self.column(k) for k in paper_order))}
        columns = {self.column(k) for keys in rows_keys for k in keys}
        self.names = sorted(columns, key=lambda c: (STAGES.index(c.split("/")[0]), rank.get(c, len(rank)), c))

    def column(self, key: str) -> str:
        name = collapsed(key)
        return key if name in self.apart else name

    def cells(self, keys: Iterable[str]) -> dict[str, str]:
        """{column: the key of `keys` shown in it}."""
        return {self.column(k): k for k in keys}


def _comparison_table(
    title: str, rows: list[Row], published: list[dict], selects: Callable[[str], bool], paper_order: list[str]
) -> list[str]:
    """Our rows with the paper's cell after each of our columns where a matched paper row has the key.
    `published[i]` is the paper row of `rows[i]`; `selects(key)` picks the table's keys."""
    ours = [{k for k in row.metric_keys if selects(k)} for row in rows]
    theirs = [{k for k in p if selects(k)} for p in published]
    columns = _Columns([a | b for a, b in zip(ours, theirs, strict=True)], paper_order)
    if not columns.names:
        return []
    our_cells, paper_cells = [columns.cells(k) for k in ours], [columns.cells(k) for k in theirs]
    with_paper = {c for cells in paper_cells for c in cells}
    header, lines = ["model", "runs"], [[row.label, str(len(row.runs))] for row in rows]
    for c in columns.names:
        header += [c, f"paper {c}"] if c in with_paper else [c]
        for i, row in enumerate(rows):  # our_cells[i] holds keys the row's runs have: a cell each
            lines[i].append(runs_cell(row.runs, our_cells[i][c], span=True).text if c in our_cells[i] else "")
            if c in with_paper:
                lines[i].append(_paper_text(published[i].get(paper_cells[i].get(c))))
    return table_section(title, header, lines)


def _paper_text(cell: float | dict | None) -> str:
    """A published number, or a published summary over folds in the form of ours."""
    return "" if cell is None else published_value(cell).text


def _settings_table(task: str, rows: list[Row], matched: list[str | None], paper: dict) -> list[str]:
    """Per row: the paper row that applies (when the paper's rows carry settings) and the runs' values of the
    paper's `setting_keys` (run.json's `task.paper_settings`), then the paper's own setting of those keys."""
    columns: dict[str, list[str]] = {}  # title -> a cell per row
    if any(parse_row_name(key)[1] for key in paper["rows"]):
        columns["paper row"] = [key or "" for key in matched]
    setting_keys = paper.get("setting_keys", {})
    for key in setting_keys:
        values = [[r.record.task.paper_settings.get(key) for r in row.runs] for row in rows]
        columns[key] = [", ".join(dict.fromkeys("unset" if v is None else v for v in vs)) for vs in values]
    if not columns:
        return []
    lines = [[row.label, str(len(row.runs)), *(c[i] for c in columns.values())] for i, row in enumerate(rows)]
    out = table_section(f"{task}: settings", ["model", "runs", *columns], lines)
    said = "; ".join(f"`{k}`: {text}" for k, text in setting_keys.items())
    return out + ([f"Paper's setting: {said}.", ""] if said else [])


def task_report(task: str, rows: list[Row], paper: dict) -> list[str]:
    """The markdown section of one task: what the cells are, the rows' settings, dev, test and per-group
    tables, the predicted label shares of classifiers, then the paper's rows that no run matched."""
    matched = [matching_paper_row(row, paper) for row in rows]
    published = [paper["rows"][key] if key else {} for key in matched]
    paper_order = list(dict.fromkeys(k for cells in paper["rows"].values() for k in cells))
    paper_dev = {collapsed(k) for k in paper_order if k.startswith("val/")}
    out = [f"## {task}", "", CELLS]
    if paper["rows"]:
        out += [f"- Paper: {paper['paper']}, {paper.get('table', '')}. Percentages are shown as fractions."]
        out += [f"- Source: {paper['source']}"]
        out += [f"- Measured under: {paper['setting']}"] if paper.get("setting") else []
    out += ["", *_settings_table(task, rows, matched, paper)]
    undeclared = undeclared_figures(rows)
    tables = {  # the best checkpoint's dev scores where the paper has them, test, one per split test metric
        "dev": lambda k: k.startswith("val/") and is_overall(k) and collapsed(k) in paper_dev,
        "test": lambda k: k.startswith("test/") and is_overall(k) and k.split("/")[1] not in undeclared,
    }
    split_metrics = {k.split("/")[1] for row in rows for k in row.metric_keys if is_split(k)} - undeclared
    split_metrics |= {k.split("/")[1] for cells in published for k in cells if is_split(k)}
    rank = {key: i for i, key in enumerate(paper_order)}
    for metric in sorted(split_metrics, key=lambda m: (rank.get(f"test/{m}", len(rank)), m)):
        tables[f"test/{metric}/<group>"] = lambda k, p=f"test/{metric}/": k.startswith(p)
    for name, selects in tables.items():
        out += _comparison_table(f"{task}: {name}", rows, published, selects, paper_order)
    out += shares_section(task, rows)  # what the classifiers predict: a collapse on one label shows here
    unmatched = {key: cells for key, cells in paper["rows"].items() if key not in matched}
    if unmatched:
        columns = _Columns([set(cells) for cells in unmatched.values()], paper_order)
        lines = [
            [name, *(_paper_text(cells.get(columns.cells(cells).get(c))) for c in columns.names)]
            for name, cells in unmatched.items()
        ]
        out += table_section(f"{task}: published, not run here", ["paper row", *columns.names], lines)
    return out


def markdown_report(runs: list[Run], paper_dir: Path | None = None) -> str:
    if not runs:
        return "No metrics.json found.\n"
    out = []
    for task, rows in group_runs(runs).items():
        out += task_report(task, rows, load_paper(task, paper_dir, [r for row in rows for r in row.runs]))
    return "\n".join(out)


def scoring_sections(runs: list[Run]) -> list[str]:
    """A table per task with a generating run: its LLMs' rows side by side ([] without such runs)."""
    # task -> the same LLM on the same items -> (generates, scoring, template) -> runs
    found: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for run in runs:
        llm, row = run.record.model.llm, run.record.model.row
        if llm is not None and llm.prompting is not None and row is not None:
            how = (llm.prompting.generates, llm.prompting.scoring, llm.prompting.template)
            found[run.task][(row, run.data_name, run.record.items)][how].append(run)
    out = []
    for task, models in sorted(found.items()):
        compared = {key: rows for key, rows in models.items() if any(generates for generates, *_ in rows)}
        if not compared:
            continue
        every = [r for rows in compared.values() for group in rows.values() for r in group]
        headline = list(dict.fromkeys((h.key, h.title) for r in every for h in r.record.task.headline))
        shown = [f for f in GENERATION if any(f"test/{f}" in r.metrics for r in every)]
        keys, lines = [*(key for key, _ in headline), *(f"test/{f}" for f in shown)], []
        for (row, _, items), rows in sorted(compared.items(), key=lambda found: str(found[0])):
            for (_, scoring, template), group in sorted(rows.items()):  # generating last
                texts = [cell.text if (cell := runs_cell(group, key)) else "" for key in keys]
                lines.append([row, scoring, template, str(items or ""), str(len(group)), *texts])
        header = ["model", "scoring", "template", "items", "runs", *(t for _, t in headline), *shown]
        out += table_section(f"{task}: generated answers beside log-likelihood", header, lines)
        out += [GENERATION_CAPTION, ""]
    return out


def plot_per_group(runs: list[Run], out: Path, paper_dir: Path | None = None) -> bool:
    """Bars of the first task's first test metric split by group (implicature type) with an overall twin
    (Circa's per-class f1 has none), a bar per row, the paper's values black diamonds. False when no task has
    one."""
    for task, rows in group_runs(runs).items():
        found = {k for row in rows for k in row.metric_keys}
        keys = sorted(k for k in found if is_split(k) and k.rsplit("/", 1)[0] in found)
        if not keys:
            continue
        paper = load_paper(task, paper_dir, [r for row in rows for r in row.runs])
        metric = keys[0].split("/")[1]
        groups = [k.split("/", 2)[2] for k in keys if k.split("/")[1] == metric]
        fig, ax = pyplot().subplots(figsize=(max(6, 1.4 * len(groups)), 3.5))
        series = []
        for row in rows:
            cells = [runs_cell(row.runs, f"test/{metric}/{g}") for g in groups]
            errors = [c.half if c and c.half is not None else math.nan for c in cells]
            series.append((row.label, [c.mean if c else math.nan for c in cells], errors, {"capsize": 2}))
        places = bar_groups(ax, groups, series, f"test {metric}")
        marks = [
            (x, published_value(cell).mean)
            for row, xs in zip(rows, places, strict=True)
            for x, g in zip(xs, groups, strict=True)
            if (cell := paper_row(row, paper).get(f"test/{metric}/{g}")) is not None
        ]
        if marks:
            xs, ys = zip(*marks, strict=True)
            ax.scatter(xs, ys, marker="D", s=28, color="black", label="paper", zorder=3)
        ax.set_title(f"{task}: {metric} per implicature type")
        legend_below(fig, ax, max(6, 1.4 * len(groups)), 3.5)
        save_png(fig, out)
        return True
    return False
