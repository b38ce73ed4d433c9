"""A test confusion matrix per classification row (`confusion-<task>-<row>.png`) and per task (its rows side by
side, `confusion-<task>.png`): colour and number the share of the gold row, the count in brackets."""

from __future__ import annotations

import math
import re
import statistics
import textwrap
from dataclasses import dataclass
from pathlib import Path

from pragexp.report.label_shares import NO_ANSWER, read_run_labels
from pragexp.report.runs import Row, Run, group_runs
from pragexp.utils.figures import pyplot, save_png

MAX_LABELS = 20
PANELS_PER_LINE = 4


@dataclass
class RowMatrix:
    row: Row
    labels: tuple[str, ...]  # the gold rows
    columns: tuple[str, ...]  # the predictions: the labels, and "no answer" where a run gave none
    counts: list[list[float]]  # gold x predicted
    how: str  # "mean of 3 runs", "1 run", "first of 2 runs (label sets differ)"


def row_matrix(row: Row) -> RowMatrix | None:
    """The row's test confusion counts: the mean over its runs when they share one label set (in the first run's
    order), else the first run's; None when no run has them."""
    counted = [c for c in map(read_run_labels, row.runs) if c is not None and c.labels]
    if not counted or len(counted[0].labels) > MAX_LABELS:
        return None
    labels, n = counted[0].labels, len(counted)
    if any(set(c.labels) != set(labels) for c in counted):
        counted, how = counted[:1], f"first of {n} runs (label sets differ)"
    else:
        how = f"mean of {n} runs" if n > 1 else "1 run"
    orders = [[c.labels.index(label) for label in labels] for c in counted]  # from predictions: may differ
    matrices = [
        [[c.matrix[i][j] for j in (*at, -1)] for i in at] for c, at in zip(counted, orders, strict=True)
    ]
    width = range(len(labels) + 1)
    mean = [[statistics.fmean(m[i][j] for m in matrices) for j in width] for i in range(len(labels))]
    if not any(r[-1] for r in mean):  # every item answered: no such column
        return RowMatrix(row, labels, labels, [r[:-1] for r in mean], how)
    return RowMatrix(row, labels, (*labels, NO_ANSWER), mean, how)


def _count_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def draw(ax, matrix: RowMatrix, title: str) -> None:
    """The matrix on `ax`, each gold row normalised to shares, the counts printed under them."""
    counts = matrix.counts
    shares = [[c / sum(r) if sum(r) else 0.0 for c in r] for r in counts]
    ax.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)

    def short(names):
        return [n if len(n) <= 18 else n[:16] + "…" for n in names]

    ax.set_xticks(range(len(matrix.columns)), short(matrix.columns), rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(matrix.labels)), short(matrix.labels), fontsize=8)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    for i in range(len(matrix.labels)):
        for j in range(len(matrix.columns)):
            color = "white" if shares[i][j] > 0.5 else "black"
            text = f"{shares[i][j]:.2f}\n({_count_text(counts[i][j])})"
            ax.text(j, i, text, ha="center", va="center", color=color, fontsize=7)
    ax.set_title("\n".join(textwrap.fill(line, 48) for line in title.split("\n")), fontsize=9)


def _row_figure(task: str, matrix: RowMatrix, out: Path) -> Path:
    size = 2.5 + 0.75 * len(matrix.columns)
    fig, ax = pyplot().subplots(figsize=(size, size))
    draw(ax, matrix, f"{task}: {matrix.row.label}\ntest, rows gold, {matrix.how}")
    return save_png(fig, out)


def _task_figure(task: str, matrices: list[RowMatrix], out: Path) -> Path:
    ncols = min(len(matrices), PANELS_PER_LINE)
    nrows, size = math.ceil(len(matrices) / ncols), max(2.5 + 0.75 * len(m.columns) for m in matrices)
    fig, axes = pyplot().subplots(nrows, ncols, figsize=(size * ncols, size * nrows), squeeze=False)
    for k, ax in enumerate(axes.flat):
        if k < len(matrices):
            draw(ax, matrices[k], f"{matrices[k].row.label}\n{matrices[k].how}")
        else:
            ax.axis("off")
    fig.suptitle(f"{task}: test confusion (rows gold, shares of the gold row, counts in brackets)")
    return save_png(fig, out)


def figures(runs: list[Run], folder: Path) -> list[Path]:
    """One PNG per classification row and one per task with its rows side by side; the paths written."""
    written = []
    for task, rows in group_runs(runs).items():
        matrices = [m for m in map(row_matrix, rows) if m is not None]
        used: set[str] = set()
        for matrix in matrices:
            # the label as a file name part: `bert_yn (model.pretrained=minilm)` -> `bert_yn_model.pretrained-minilm`
            slug = (
                re.sub(r"[^A-Za-z0-9._-]+", "_", matrix.row.label.replace("=", "-")).strip("_.")[:120]
                or "row"
            )
            while slug in used:  # two labels that differ only in characters a file name drops
                slug += "_"
            used.add(slug)
            written.append(_row_figure(task, matrix, Path(folder) / f"confusion-{task}-{slug}.png"))
        if matrices:
            written.append(_task_figure(task, matrices, Path(folder) / f"confusion-{task}.png"))
    return written
