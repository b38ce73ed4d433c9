"""Benchmarks scored while a model trained (pragexp.training.benchmarks) against the step, beside the task's
dev curve, from the run's `csv/metrics.csv`: `training-curves-<task>-<run dir>.png`."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from pragexp.report.runs import Run
from pragexp.reporting.figures import legend_below, pyplot, save_png

PREFIX = "bench/"


def read_curves(path: Path, dev_key: str) -> dict[str, dict[int, dict[str, float]]]:
    """{curve: {step: {figure: value}}}: each benchmark's (`bench/<name>/<figure>`) and the dev key's."""
    curves: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    dev: dict[int, dict[str, float]] = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            for key, value in ((k, v) for k, v in row.items() if v not in ("", None)):
                if key.startswith(PREFIX):
                    name, figure = key[len(PREFIX) :].split("/", 1)
                    curves[name].setdefault(step, {})[figure] = float(value)
                elif key == dev_key:  # Lightning logs a validation at the step of the batch before it
                    dev[step + 1] = {"acc": float(value)}
    # The benchmarks are scored after the last step: a dev value past it is the best checkpoint's, after
    # training.
    last = max((s for points in curves.values() for s in points), default=0)
    return {**curves, **({f"dev {dev_key}": {s: v for s, v in dev.items() if s <= last}} if dev else {})}


def plot_run(run: Run, out: Path) -> Path | None:
    log = run.path / "csv" / "metrics.csv"
    dev_key = run.record.task.monitor or "val/acc"
    curves = read_curves(log, dev_key) if log.is_file() else {}
    if not any(not name.startswith("dev ") for name in curves):
        return None
    fig, ax = pyplot().subplots(figsize=(6, 3.5))
    for name, points in sorted(curves.items(), key=lambda item: item[0].startswith("dev ")):
        steps = sorted(s for s in points if "acc" in points[s])
        values = [points[s]["acc"] for s in steps]
        dev = name.startswith("dev ")
        ax.plot(steps, values, marker="o", markersize=3, linestyle="--" if dev else "-", label=name)
        bands = [s for s in steps if "acc_ci95_low" in points[s]]
        if bands and not dev:
            low = [points[s]["acc_ci95_low"] for s in bands]
            ax.fill_between(bands, low, [points[s]["acc_ci95_high"] for s in bands], alpha=0.15)
    ax.set(xlabel="training step", ylabel="accuracy (bands: 95% interval)")
    ax.set_title(f"{run.task}: benchmarks while training")
    legend_below(fig, ax, 6, 3.5)
    return save_png(fig, out)


def figures(runs: list[Run], folder: Path) -> list[Path]:
    """The figure of every run that scored benchmarks while it trained."""
    drawn = [plot_run(r, Path(folder) / f"training-curves-{r.task}-{r.path.name}.png") for r in runs]
    return [path for path in drawn if path is not None]
