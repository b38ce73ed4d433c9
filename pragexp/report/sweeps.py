"""Sweeps (the job dirs below a `multirun.yaml`): trials ranked by the metric they monitor (run.json), the
best as a command line, the metric against each swept parameter (an override whose values differ between
trials)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from pragexp.report.runs import Run, read_run
from pragexp.reporting.figures import pyplot, save_png
from pragexp.reporting.markdown import table_section
from pragexp.reporting.results import metrics_cell
from pragexp.runs.settings import LAUNCH_OVERRIDES
from pragexp.utils.io import load_yaml


@dataclass
class Trial:
    path: Path
    overrides: dict[str, str]  # key -> value as typed (`optimizer.lr` -> `0.00125`)
    run: Run | None  # None: no metrics.json (failed or interrupted)
    entry: str = "train"  # the entry point that ran it: pragexp.train or pragexp.eval

    @property
    def metrics(self) -> dict[str, float] | None:
        return self.run.metrics if self.run else None


@dataclass
class Sweep:
    path: Path
    trials: list[Trial]

    def __post_init__(self):
        tasks = [t.run.record.task for t in self.trials if t.run]
        self.monitor = next((task.monitor for task in tasks if task.monitor), "")
        self.maximize = next((task.monitor_mode for task in tasks if task.monitor_mode), "max") == "max"
        keys = list(dict.fromkeys(k for t in self.trials for k in t.overrides))  # in command-line order
        self.swept = [k for k in keys if len({t.overrides.get(k) for t in self.trials}) > 1]

    def ranked(self) -> list[Trial]:
        """Trials with the monitored metric, best first; then those without it."""
        scored = [t for t in self.trials if t.metrics and self.monitor in t.metrics]
        scored.sort(key=lambda t: t.metrics[self.monitor], reverse=self.maximize)
        return scored + [t for t in self.trials if t not in scored]

    def best(self) -> Trial | None:
        return next((t for t in self.ranked() if t.metrics and self.monitor in t.metrics), None)


def read_trial(job_dir: Path) -> Trial:
    overrides = [str(o).partition("=") for o in load_yaml(job_dir / ".hydra" / "overrides.yaml", [])]
    run = read_run(job_dir / "metrics.json") if (job_dir / "metrics.json").is_file() else None
    job = load_yaml(job_dir / ".hydra" / "hydra.yaml", {}).get("hydra", {}).get("job", {})
    entry = "eval" if job.get("name") == "eval" else "train"
    return Trial(job_dir, {key.lstrip("+~"): value for key, _, value in overrides}, run, entry)


def find_sweeps(dirs: list[str | Path]) -> list[Sweep]:
    """The sweeps at or below the given dirs (each dir holding a `multirun.yaml`)."""
    found = (sorted(m.parent for m in d.rglob("multirun.yaml")) for d in map(Path, dirs) if d.is_dir())
    sweeps = []
    for root in dict.fromkeys(root for roots in found for root in roots):
        jobs = [p.parent.parent for p in root.glob("*/.hydra/overrides.yaml")]
        jobs.sort(key=lambda p: (int(p.name), "") if p.name.isdigit() else (1 << 30, p.name))
        sweeps.append(Sweep(root, [read_trial(job) for job in jobs]))
    return [sweep for sweep in sweeps if sweep.trials]


def _short(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value
    return value if number.is_integer() and "." not in value else f"{number:.4g}"


def sweep_report(sweep: Sweep) -> str:
    monitor, swept = sweep.monitor, sweep.swept
    keys = [monitor, *(["test/" + monitor.split("/", 1)[1]] if monitor.startswith("val/") else [])]
    header = ["trial", *swept, f"{monitor} ({'max' if sweep.maximize else 'min'})", *keys[1:]]
    lines = []
    for trial in sweep.ranked():
        cells = [trial.path.name, *(_short(trial.overrides.get(k, "")) for k in swept)]
        if trial.metrics is None:
            cells += ["no metrics.json: failed or interrupted"] + [""] * (len(keys) - 1)
        else:
            cells += [metrics_cell(trial.metrics, k, digits=4) if k in trial.metrics else "" for k in keys]
        lines.append(cells)
    finished = sum(t.metrics is not None for t in sweep.trials)
    out = [f"## sweep {sweep.path}", "", f"{finished} of {len(sweep.trials)} trials finished.", ""]
    out += table_section(None, header, lines)
    if (best := sweep.best()) is not None:
        out += [f"Best: trial {best.path.name}, {monitor} = {best.metrics[monitor]:.4f}. Re-run it with:", ""]
        kept = [f"{k}={v}" for k, v in best.overrides.items() if not f"{k}=".startswith(LAUNCH_OVERRIDES)]
        command = " ".join(["python", "-m", f"pragexp.{best.entry}", *map(shlex.quote, kept)])
        out += ["```", command, "```", ""]
    return "\n".join(out)


def plot_sweep(sweep: Sweep, out: Path) -> bool:
    """One panel per swept parameter: the monitored metric of each finished trial against its value (log scale
    for positive values over a factor of 10 or more), the best circled. False when there is nothing to
    plot."""
    trials = [t for t in sweep.trials if t.metrics and sweep.monitor in t.metrics]
    if not trials or not sweep.swept:
        return False
    best, swept = sweep.best(), sweep.swept  # one of `trials`: they are the ones with the metric
    fig, axes = pyplot().subplots(1, len(swept), figsize=(3.6 * len(swept), 3.2), squeeze=False, sharey=True)
    for ax, key in zip(axes[0], swept, strict=True):
        values = [t.overrides.get(key, "") for t in trials]
        ys = [t.metrics[sweep.monitor] for t in trials]
        try:
            xs = [float(v) for v in values]
            if min(xs) > 0 and max(xs) / min(xs) >= 10:
                ax.set_xscale("log")
        except ValueError:  # categorical (model=lstm,memnn): one position per value
            labels = sorted(set(values))
            xs = [float(labels.index(v)) for v in values]
            ax.set_xticks(range(len(labels)), labels, rotation=30)
        ax.scatter(xs, ys, s=22)
        i = trials.index(best)
        ax.scatter([xs[i]], [ys[i]], s=120, facecolors="none", edgecolors="red", label="best")
        ax.set_xlabel(key)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(sweep.monitor)
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{sweep.path.name}: {len(trials)} trials", fontsize=10)
    save_png(fig, out, dpi=110)
    return True
