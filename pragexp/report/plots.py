"""The task tables' per-group figure (`--plot` without `--scorecard`: GRICE's Fig. 5 for grice_qa)."""

from __future__ import annotations

import math
from pathlib import Path

from pragexp.report.paper import load_paper, paper_row
from pragexp.report.runs import Run, group_runs
from pragexp.report.tables import is_split
from pragexp.utils.figures import legend_below, pyplot, save_png
from pragexp.utils.results import published_value, runs_cell


def plot_per_group(runs: list[Run], out: Path, paper_dir: Path | None = None) -> bool:
    """Bars of the first task's first test metric split by group (implicature type) that has an overall twin
    (Circa's per-class test/f1/<label> has none), a bar per row with its 95% interval over items where the runs
    wrote it, the paper's value a black diamond over a bar where it has one. False when no task has such metrics."""
    for task, rows in group_runs(runs).items():
        found = {k for row in rows for k in row.metric_keys}
        keys = sorted(k for k in found if is_split(k) and k.rsplit("/", 1)[0] in found)
        if not keys:
            continue
        paper = load_paper(task, paper_dir, [r for row in rows for r in row.runs])
        metric = keys[0].split("/")[1]
        groups = [k.split("/", 2)[2] for k in keys if k.split("/")[1] == metric]
        fig, ax = pyplot().subplots(figsize=(max(6, 1.4 * len(groups)), 3.5))
        width, paper_label = 0.8 / len(rows), "paper"
        for i, row in enumerate(rows):
            cells = [runs_cell(row.runs, f"test/{metric}/{g}") for g in groups]
            means = [c.mean if c else math.nan for c in cells]
            errors = [c.half if c and c.half is not None else math.nan for c in cells]  # 95% interval
            positions = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(groups))]
            ax.bar(positions, means, width, yerr=errors, label=row.label, capsize=2)
            published = {g: paper_row(row, paper).get(f"test/{metric}/{g}") for g in groups}
            at = zip(positions, groups, strict=True)
            marks = [(x, published_value(published[g]).mean) for x, g in at if published[g] is not None]
            if marks:
                xs, ys = zip(*marks, strict=True)
                ax.scatter(xs, ys, marker="D", s=28, color="black", label=paper_label, zorder=3)
                paper_label = None  # one legend entry for all the paper's points
        ax.set_xticks(range(len(groups)), groups)
        ax.set_ylabel(f"test {metric}")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{task}: {metric} per implicature type")
        legend_below(fig, ax, max(6, 1.4 * len(groups)), 3.5)
        save_png(fig, out)
        return True
    return False
