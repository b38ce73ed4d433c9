"""What a benchmark's report section needs to show one run's accuracy per group (a language and type, a mental
state and order) with its uncertainty: the table cell and a figure of bars whose whiskers are the 95% interval
over items (as every figure of the report), a panel per run. The figures are metrics.json's
(`test/acc/<group>`, `test/acc_ci95_low/<group>`, `test/acc_ci95_high/<group>`, `test/acc_n/<group>`:
pragexp/metrics/uncertainty.py); a group the run has no figure for is an empty cell and a missing bar."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from pragexp.reporting.figures import bar_groups, pyplot, save_png
from pragexp.reporting.results import figure_key, llm_label, metrics_cell, template_name, units_of

ACC = "test/acc"


def run_label(run) -> str:
    """A row's model as the section tables name it: the LLM with its settings, and its prompt template."""
    return f"{llm_label(run)}, {template_name(run)}"


def figure_cell(run, group: str | None = None, name: str = ACC) -> str:
    """`0.337 ± 0.021 (n=130 scenarios)`: a figure of the run (`name`: accuracy by default; `test/joint_acc`,
    `test/macro_f1`, ...) for a group (the whole run for None); "" where the run has none."""
    key = name if group is None else f"{name}/{group}"
    return metrics_cell(run.metrics, name, group, units=units_of([run])) if key in run.metrics else ""


def figure_estimate(metrics: dict, group: str | None = None, name: str = ACC) -> tuple[float, float]:
    """(accuracy, half the 95% interval) of the group (`name`: as `figure_cell`); NaN for what the run lacks
    (no bar, or no whisker)."""
    key = name if group is None else f"{name}/{group}"
    low = metrics.get(figure_key(name, "ci95_low", group), math.nan)
    high = metrics.get(figure_key(name, "ci95_high", group), math.nan)
    return metrics.get(key, math.nan), (high - low) / 2


def bar_panels(
    runs: Sequence,
    xs: Sequence[str],
    bars: Sequence[str],
    group: Callable[[str, str], str | None],
    chance: float,
    title: str,
    path: Path,
) -> Path:
    """A panel per run: a cluster of bars per x (a language), a bar per `bars` (a type) of the accuracy of
    `group(x, bar)` (None: the whole run), with its 95% interval as a whisker; chance dashed."""
    plt = pyplot()
    fig, axes = plt.subplots(len(runs), 1, figsize=(max(7.0, 1.2 * len(xs)), 2.8 * len(runs)), squeeze=False)
    for ax, run in zip(axes[:, 0], runs, strict=True):
        series = []
        for bar in bars:
            found = [figure_estimate(run.metrics, group(x, bar)) for x in xs]
            whiskers = [0.0 if math.isnan(se) else se for _, se in found]
            series.append((bar.replace("_", " "), [m for m, _ in found], whiskers, {}))
        bar_groups(ax, xs, series, "accuracy")
        ax.axhline(chance, color="black", linestyle="--", linewidth=1, label="chance")
        ax.set_title(run_label(run), fontsize=8)
    axes[0, 0].legend(fontsize=7, ncol=len(bars) + 1, loc="upper center", bbox_to_anchor=(0.5, 1.45))
    fig.suptitle(title, fontsize=10)
    return save_png(fig, path)
