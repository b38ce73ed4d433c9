"""What a classifier predicts, from `predictions.jsonl` ("gold", "predicted"; null: no label named), else
`confusion/test.json` (gold then unknown): a row's label shares beside the gold ones, its confusion matrix."""

from __future__ import annotations

import json
import math
import re
import statistics
import textwrap
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.files.jsonl import iter_jsonl
from pragexp.report.runs import Row, Run, data_setting, group_runs
from pragexp.reporting.figures import pyplot, save_png
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import data_facts

NO_ANSWER = "no answer"  # the column of null predictions
COLLAPSE = 0.9  # a row whose top label takes more than this share of its predictions is warned about
MAX_COLUMNS = 12  # more labels than this (GRICE QA's answer words): the largest shares, then "other"
MAX_LABELS, PANELS_PER_LINE = 20, 4  # a confusion matrix of more labels cannot be read: none drawn
CAPTION = (
    "Share of the test predictions per label: mean over the row's runs that wrote predictions.jsonl or "
    "confusion/test.json (runs: how many). gold: the test items' own labels, per data and label set."
)


@dataclass
class RunLabels:
    """One run's test predictions counted: gold x predicted over `labels`, the last column the items with no
    answer; `unplaced`: those whose gold labels are not known (confusion/test.json alone: gold shares
    unknown)."""

    labels: tuple[str, ...]
    matrix: list[list[float]]
    unplaced: float = 0.0

    def shares(self) -> tuple[dict[str, float], dict[str, float] | None]:
        columns = (*self.labels, NO_ANSWER)
        counts = {label: sum(r[j] for r in self.matrix) for j, label in enumerate(columns)}
        counts[NO_ANSWER] += self.unplaced
        total = sum(counts.values())
        gold = {label: sum(r) / total for label, r in zip(self.labels, self.matrix, strict=True) if sum(r)}
        return {k: v / total for k, v in counts.items() if v}, None if self.unplaced else gold


def _read_confusion(run_dir: Path) -> tuple[tuple[str, ...], list[list[float]]] | None:
    try:
        doc = json.loads((run_dir / "confusion" / "test.json").read_text(encoding="utf-8"))
        labels, matrix = tuple(map(str, doc["labels"])), [[float(c) for c in r] for r in doc["matrix"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    square = len(matrix) == len(labels) and all(len(r) == len(labels) for r in matrix)
    return (labels, matrix) if square else None


def _read_predictions(run_dir: Path) -> list[tuple[str, str | None]] | None:
    """(gold, predicted) per test record; None without a file or where a record names no labels (GRICE
    recovery's candidate numbers)."""
    try:
        pairs = [(r.get("gold"), r.get("predicted")) for _, r in iter_jsonl(run_dir / "predictions.jsonl")]
    except (OSError, ValueError):  # no file, or not one JSON object per line
        return None
    named = all(isinstance(g, str) and (p is None or isinstance(p, str)) for g, p in pairs)
    return pairs if pairs and named else None


def read_run_labels(run: Run) -> RunLabels | None:
    """The run's test predictions counted per label (see the module's docstring); None without them."""
    confusion, pairs = _read_confusion(run.path), _read_predictions(run.path)
    if pairs:
        order = (*(confusion[0] if confusion else ()), *(g for g, _ in pairs), *(p for _, p in pairs))
        labels = tuple(label for label in dict.fromkeys(order) if label is not None)
        at = {label: i for i, label in enumerate(labels)}
        matrix = [[0.0] * (len(labels) + 1) for _ in labels]
        for gold, predicted in pairs:
            matrix[at[gold]][len(labels) if predicted is None else at[predicted]] += 1
        return RunLabels(labels, matrix)
    if confusion is None:
        return None
    labels, matrix = confusion
    count, no_answer = run.metrics.get("test/count"), run.metrics.get("test/no_answer")
    unplaced = round(no_answer * count) if count and no_answer else 0
    placed = sum(map(sum, matrix))
    return RunLabels(labels, [[*r, 0.0] for r in matrix], unplaced) if placed + unplaced else None


@dataclass
class Shares:
    """The mean over some runs of their per-run shares."""

    labels: tuple[str, ...]  # every label of the runs, in order
    predicted: dict[str, float]  # label or NO_ANSWER -> share
    gold: dict[str, float] | None
    runs: int

    def top(self) -> tuple[str, float]:
        return max(self.predicted.items(), key=lambda item: item[1])

    def collapsed(self) -> bool:
        return bool(self.predicted) and self.top()[1] > COLLAPSE


def _mean(dicts: list[dict[str, float]]) -> dict[str, float]:
    keys = dict.fromkeys(k for d in dicts for k in d)
    return {k: statistics.fmean(d.get(k, 0.0) for d in dicts) for k in keys}


def mean_shares(runs: list[Run]) -> Shares | None:
    """The runs' predicted and gold shares, each the mean over the runs that have them; None for none."""
    counted = [c for c in map(read_run_labels, runs) if c is not None]
    if not counted:
        return None
    shares = [c.shares() for c in counted]
    golds = [g for _, g in shares if g is not None]
    labels = tuple(dict.fromkeys(label for c in counted for label in c.labels))
    return Shares(labels, _mean([p for p, _ in shares]), _mean(golds) if golds else None, len(counted))


def collapse_text(shares: Shares) -> str:
    """`predicts 'Yes' for 97.3% of the test items (gold: 49.3%)`."""
    label, share = shares.top()
    if label == NO_ANSWER:
        return f"names no label for {share:.1%} of the test items"
    gold = f"{shares.gold.get(label, 0.0):.1%}" if shares.gold is not None else "unknown"
    return f"predicts '{label}' for {share:.1%} of the test items (gold: {gold})"


def gold_references(found: list[tuple[Row, Shares]]) -> list[tuple[str, Shares]]:
    """A reference row per distinct gold distribution (data and label set), named by what tells the references
    apart: `gold (data.labels=relaxed, data.setting=matched, data: circa-7-scenarios.tsv)`."""
    groups: dict[tuple, list[tuple[Row, Shares]]] = {}
    facts: dict[Row, list[str]] = {}  # what each row's data declares (data.labels=relaxed)
    for row, shares in found:
        if shares.gold is not None:
            key = (shares.labels, tuple(sorted((k, round(v, 4)) for k, v in shares.gold.items())))
            groups.setdefault(key, []).append((row, shares))
            facts[row] = [f"{k}={v}" for k, v in data_facts(row.runs[0].record)]
    everywhere = set.intersection(*map(set, facts.values())) if facts else set()
    out: list[tuple[str, Shares]] = []
    for (row, shares), *others in groups.values():  # the facts all its rows declare, but not every reference
        said = [f for f in facts[row] if f not in everywhere and all(f in facts[o] for o, _ in others)]
        files = {row.data, *(o.data for o, _ in others)}  # its data files, where its rows share them
        said += data_setting(files.pop() if len(files) == 1 else None)
        name = "gold" + (f" ({', '.join(said)})" if said else "")
        if name in {n for n, _ in out}:  # the same settings, other test items (a split seed)
            name += f", as for {row.label}"
        out.append((name, shares))
    return out


def shares_section(task: str, rows: list[Row]) -> list[str]:
    """The task's "predicted label shares" table, gold reference rows under ours, then a warning line per
    row whose top label takes more than 90% of its test predictions. [] when no run wrote predictions."""
    found = [(row, s) for row in rows if (s := mean_shares(row.runs)) is not None]
    if not found:
        return []
    references = gold_references(found)
    labels = tuple(dict.fromkeys(label for _, s in found for label in s.labels))
    every = [s.predicted for _, s in found] + [s.gold for _, s in references]
    columns, other = list(labels), len(labels) > MAX_COLUMNS  # too many: the largest shares, then "other"
    if other:
        largest = {label: max(s.get(label, 0.0) for s in every) for label in labels}
        kept = set(sorted(labels, key=lambda label: -largest[label])[: MAX_COLUMNS - 1])
        columns = [label for label in labels if label in kept]
    no_answer = any(s.predicted.get(NO_ANSWER, 0.0) > 0 for _, s in found)
    header = ["model", "runs", *columns, *(["other"] if other else []), *([NO_ANSWER] if no_answer else [])]

    def cells(shares: dict, own: tuple[str, ...], gold=False) -> list[str]:
        """Blank for a label outside the row's label set (and a gold row's no-answer cell)."""
        out = [f"{shares.get(c, 0.0):.3f}" if c in own else "" for c in columns]
        rest = sum(v for k, v in shares.items() if k not in columns and k != NO_ANSWER)
        out += [f"{rest:.3f}"] if other else []
        return out + ([("" if gold else f"{shares.get(NO_ANSWER, 0.0):.3f}")] if no_answer else [])

    lines = [[row.label, str(s.runs), *cells(s.predicted, s.labels)] for row, s in found]
    lines += [[name, "", *cells(s.gold, s.labels, gold=True)] for name, s in references]
    out = table_section(f"{task}: predicted label shares (test)", header, lines)
    out += [CAPTION + (f" {NO_ANSWER}: an LLM reply that named no label." if no_answer else ""), ""]
    for row, s in found:  # a model that predicts one label by construction is not warned about
        if not row.runs[0].record.model.one_label and s.collapsed():
            out += [f"warning: {row.label} {collapse_text(s)}", ""]
    return out


@dataclass
class RowMatrix:
    row: Row
    labels: tuple[str, ...]  # the gold rows
    columns: tuple[str, ...]  # the predictions: the labels, and "no answer" where a run gave none
    counts: list[list[float]]  # gold x predicted
    how: str  # "mean of 3 runs", "1 run", "first of 2 runs (label sets differ)"


def row_matrix(row: Row) -> RowMatrix | None:
    """The row's test confusion counts: the mean over its runs when they share one label set (in the first
    run's order), else the first run's; None when no run has them."""
    counted = [c for c in map(read_run_labels, row.runs) if c is not None and c.labels]
    if not counted or len(counted[0].labels) > MAX_LABELS:
        return None
    labels, n = counted[0].labels, len(counted)
    same = all(set(c.labels) == set(labels) for c in counted)
    how = (f"mean of {n} runs" if n > 1 else "1 run") if same else f"first of {n} runs (label sets differ)"
    matrices = []  # in the first run's order (from predictions, the orders may differ)
    for c in counted if same else counted[:1]:
        at = [c.labels.index(label) for label in labels]
        matrices.append([[c.matrix[i][j] for j in (*at, -1)] for i in at])
    stacked = zip(*matrices, strict=True)  # per gold label: its row in each run
    mean = [[statistics.fmean(column) for column in zip(*rows, strict=True)] for rows in stacked]
    if not any(r[-1] for r in mean):  # every item answered: no such column
        return RowMatrix(row, labels, labels, [r[:-1] for r in mean], how)
    return RowMatrix(row, labels, (*labels, NO_ANSWER), mean, how)


def draw(ax, matrix: RowMatrix, title: str) -> None:
    """The matrix on `ax`, each gold row normalised to shares, the counts printed under them."""
    counts = matrix.counts
    shares = [[c / sum(r) if sum(r) else 0.0 for c in r] for r in counts]
    ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)

    def short(names):
        return [n if len(n) <= 18 else n[:16] + "…" for n in names]

    ax.set_xticks(range(len(matrix.columns)), short(matrix.columns), rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(matrix.labels)), short(matrix.labels), fontsize=8)
    ax.set(xlabel="predicted", ylabel="gold")
    for i in range(len(matrix.labels)):
        for j in range(len(matrix.columns)):
            count = counts[i][j]  # a mean over runs may be fractional
            count = str(int(count)) if float(count).is_integer() else f"{count:.1f}"
            color = "white" if shares[i][j] > 0.5 else "black"
            ax.text(j, i, f"{shares[i][j]:.2f}\n({count})", ha="center", va="center", color=color, fontsize=7)
    ax.set_title("\n".join(textwrap.fill(line, 48) for line in title.split("\n")), fontsize=9)


def _panels(matrices: list[RowMatrix], titles: list[str], out: Path, title: str | None = None) -> Path:
    """The matrices side by side, PANELS_PER_LINE a line."""
    ncols = min(len(matrices), PANELS_PER_LINE)
    nrows, size = math.ceil(len(matrices) / ncols), max(2.5 + 0.75 * len(m.columns) for m in matrices)
    fig, axes = pyplot().subplots(nrows, ncols, figsize=(size * ncols, size * nrows), squeeze=False)
    for k, ax in enumerate(axes.flat):
        draw(ax, matrices[k], titles[k]) if k < len(matrices) else ax.axis("off")
    if title:
        fig.suptitle(title)
    return save_png(fig, out)


def figures(runs: list[Run], folder: Path) -> list[Path]:
    """One PNG per classification row and one per task with its rows side by side; the paths written."""
    written = []
    for task, rows in group_runs(runs).items():
        matrices = [m for m in map(row_matrix, rows) if m is not None]
        used: set[str] = set()
        for matrix in matrices:
            # a file name part: `bert_yn (model.pretrained=minilm)` -> `bert_yn_model.pretrained-minilm`
            name = matrix.row.label.replace("=", "-")
            slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.")[:120] or "row"
            while slug in used:  # two labels that differ only in characters a file name drops
                slug += "_"
            used.add(slug)
            title = f"{task}: {matrix.row.label}\ntest, rows gold, {matrix.how}"
            written.append(_panels([matrix], [title], Path(folder) / f"confusion-{task}-{slug}.png"))
        if matrices:
            titles = [f"{m.row.label}\n{m.how}" for m in matrices]
            title = f"{task}: test confusion (rows gold, shares of the gold row, counts in brackets)"
            written.append(_panels(matrices, titles, Path(folder) / f"confusion-{task}.png", title))
    return written
