"""Sweeps (Hydra multirun dirs, grid or Optuna): every trial ranked by the monitored metric, the best
trial as a command line that re-runs it, and the metric against each swept parameter. The monitored
metric is the one the trials declare (run.json's `task.monitor`).

A sweep dir is one holding Hydra's `multirun.yaml`; its trials are the job dirs below it with a
`.hydra/overrides.yaml`. A trial without `metrics.json` failed or was interrupted: it is listed last.
The swept parameters are the overrides whose values differ between trials. A trial's scores carry their standard
error over items and n where the trial wrote them (pragexp.metrics.uncertainty.metrics_cell).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from pragexp.report.runs import read_run
from pragexp.utils.figures import pyplot, save_png
from pragexp.utils.instantiate import LAUNCH_OVERRIDES
from pragexp.utils.io import load_yaml
from pragexp.utils.markdown import table_section
from pragexp.utils.results import metrics_cell


@dataclass
class Trial:
    path: Path
    overrides: dict[str, str]  # key -> value as typed (`optimizer.lr` -> `0.00125`)
    metrics: dict[str, float] | None  # None: no metrics.json (failed or interrupted)
    monitor: str | None
    monitor_mode: str | None
    entry: str = "train"  # the entry point that ran it: pragexp.train or pragexp.eval


@dataclass
class Sweep:
    path: Path
    trials: list[Trial]

    @property
    def monitor(self) -> str:
        return next((t.monitor for t in self.trials if t.monitor), "")

    @property
    def maximize(self) -> bool:
        return next((t.monitor_mode for t in self.trials if t.monitor_mode), "max") == "max"

    @property
    def swept(self) -> list[str]:
        """The override keys whose values differ between trials, in command-line order."""
        keys = list(dict.fromkeys(k for t in self.trials for k in t.overrides))
        return [k for k in keys if len({t.overrides.get(k) for t in self.trials}) > 1]

    def ranked(self) -> list[Trial]:
        """Trials with the monitored metric, best first; then those without it."""
        scored = [t for t in self.trials if t.metrics and self.monitor in t.metrics]
        scored.sort(key=lambda t: t.metrics[self.monitor], reverse=self.maximize)
        return scored + [t for t in self.trials if t not in scored]

    def best(self) -> Trial | None:
        ranked = self.ranked()
        return ranked[0] if ranked and ranked[0].metrics and self.monitor in ranked[0].metrics else None


def _split(override: str) -> tuple[str, str]:
    key, _, value = override.partition("=")
    return key.lstrip("+~"), value


def read_trial(job_dir: Path) -> Trial:
    overrides = dict(_split(str(o)) for o in load_yaml(job_dir / ".hydra" / "overrides.yaml", []))
    run = read_run(job_dir / "metrics.json") if (job_dir / "metrics.json").is_file() else None
    task = run.record.task if run else None  # what the trial monitored, as it declares it
    job = load_yaml(job_dir / ".hydra" / "hydra.yaml", {}).get("hydra", {}).get("job", {})
    entry = "eval" if job.get("name") == "eval" else "train"
    return Trial(
        job_dir, overrides, run and run.metrics, task and task.monitor, task and task.monitor_mode, entry
    )


def _job_order(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 30, path.name)


def read_sweep(sweep_dir: Path) -> Sweep:
    jobs = sorted((p.parent.parent for p in sweep_dir.glob("*/.hydra/overrides.yaml")), key=_job_order)
    return Sweep(sweep_dir, [read_trial(j) for j in jobs])


def find_sweeps(dirs: list[str | Path]) -> list[Sweep]:
    """The sweeps at or below the given dirs (each dir holding a `multirun.yaml`)."""
    roots = []
    for d in map(Path, dirs):
        roots += sorted(p.parent for p in d.rglob("multirun.yaml")) if d.is_dir() else []
    return [s for s in map(read_sweep, dict.fromkeys(roots)) if s.trials]


def _short(value: str) -> str:
    try:
        number = float(value)
    except ValueError:
        return value
    return value if number.is_integer() and "." not in value else f"{number:.4g}"


def rerun_command(trial: Trial) -> str:
    kept = [f"{k}={v}" for k, v in trial.overrides.items() if not f"{k}=".startswith(LAUNCH_OVERRIDES)]
    return " ".join(["python", "-m", f"pragexp.{trial.entry}", *map(shlex.quote, kept)])


def sweep_report(sweep: Sweep) -> str:
    monitor, swept = sweep.monitor, sweep.swept
    test_key = "test/" + monitor.split("/", 1)[1] if monitor.startswith("val/") else None
    header = ["trial", *swept, f"{monitor} ({'max' if sweep.maximize else 'min'})"]
    header += [test_key] if test_key else []
    lines = []
    for trial in sweep.ranked():
        cells = [trial.path.name, *(_short(trial.overrides.get(k, "")) for k in swept)]
        if trial.metrics is None:
            cells += ["no metrics.json: failed or interrupted"] + ([""] if test_key else [])
        else:
            keys = [monitor, test_key] if test_key else [monitor]
            cells += [metrics_cell(trial.metrics, k, digits=4) if k in trial.metrics else "" for k in keys]
        lines.append(cells)
    finished = sum(t.metrics is not None for t in sweep.trials)
    out = [f"## sweep {sweep.path}", "", f"{finished} of {len(sweep.trials)} trials finished.", ""]
    out += table_section(None, header, lines)
    best = sweep.best()
    if best is not None:
        out += [f"Best: trial {best.path.name}, {monitor} = {best.metrics[monitor]:.4f}. Re-run it with:", ""]
        out += ["```", rerun_command(best), "```", ""]
    return "\n".join(out)


def _numbers(values: list[str]) -> list[float] | None:
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def plot_sweep(sweep: Sweep, out: Path) -> bool:
    """One panel per swept parameter: the monitored metric of every finished trial against the
    parameter's value (log scale for positive values spanning a factor of 10 or more), the best trial
    circled. False when there is nothing to plot."""
    trials = [t for t in sweep.trials if t.metrics and sweep.monitor in t.metrics]
    swept = sweep.swept
    if not trials or not swept:
        return False
    plt = pyplot()

    best = sweep.best()
    fig, axes = plt.subplots(1, len(swept), figsize=(3.6 * len(swept), 3.2), squeeze=False, sharey=True)
    for ax, key in zip(axes[0], swept, strict=True):
        values = [t.overrides.get(key, "") for t in trials]
        ys = [t.metrics[sweep.monitor] for t in trials]
        xs = _numbers(values)
        if xs is None:  # categorical (model=lstm,memnn): one position per value
            labels = sorted(set(values))
            xs = [float(labels.index(v)) for v in values]
            ax.set_xticks(range(len(labels)), labels, rotation=30)
        elif min(xs) > 0 and max(xs) / min(xs) >= 10:
            ax.set_xscale("log")
        ax.scatter(xs, ys, s=22)
        if best is not None:
            i = trials.index(best)
            ax.scatter([xs[i]], [ys[i]], s=120, facecolors="none", edgecolors="red", label="best")
        ax.set_xlabel(key)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(sweep.monitor)
    if best is not None:
        axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{sweep.path.name}: {len(trials)} trials", fontsize=10)
    save_png(fig, out, dpi=110)
    return True
