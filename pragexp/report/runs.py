"""Run directories: each run's run.json and metrics, and rows of runs that differ only in seed or fold."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.runs.record import RunRecord, read_run_record
from pragexp.utils.io import load_yaml


def data_setting(files: str | None) -> tuple[str, ...]:
    """How a row's name shows its data files: (`data: circa-7-scenarios.tsv`,); () for none."""
    return (f"data: {files}",) if files else ()


@dataclass
class Run:
    path: Path
    record: RunRecord
    metrics: dict[str, float]
    config: dict = field(default_factory=dict)  # .hydra/config.yaml, where kept: for the datasets' sections

    @property
    def task(self) -> str:
        return self.record.task.name

    @property
    def model(self) -> str:
        return self.record.model.name

    @property
    def settings(self) -> tuple[str, ...]:
        """The command-line settings, all but what a row averages over (seed, fold) and where the data is."""
        declared = self.record.settings
        return tuple(sorted([*declared.model, *declared.task, *declared.other]))

    @property
    def data_name(self) -> str | None:
        """The run's data files by name (`circa-7-scenarios.tsv`, `train.jsonl+dev.jsonl`); None without
        files."""
        return "+".join(dict.fromkeys(n for split in self.record.data.files.values() for n in split)) or None

    @property
    def foreign_data(self) -> tuple[str, ...]:
        """(`data: circa-7-scenarios.tsv`,) where the files are not the release's own, else ()."""
        return () if self.record.data.source == "release" else data_setting(self.data_name)


@dataclass(frozen=True)
class Row:
    """Runs that share a row: equal in every field but `experiment` and `runs`."""

    task: str  # the report's task, or the scorecard's column title
    name: str
    model: str
    experiment: str | None = field(compare=False)
    settings: tuple[str, ...]
    runs: list[Run] = field(default_factory=list, compare=False)
    kind: str = ""  # the scorecard's: majority | trained | llm
    aside: tuple[str, ...] = ()  # the scorecard's task settings: they qualify a cell, not the row
    data: str | None = None  # the data files that name the row (its task's runs differ in them)

    @property
    def shown(self) -> tuple[str, ...]:
        """The settings its name shows: its own, then its data files where they name it."""
        return (*self.settings, *data_setting(self.data))

    @property
    def label(self) -> str:
        return self.name + (f" ({', '.join(self.shown)})" if self.shown else "")

    @property
    def metric_keys(self) -> set[str]:
        return {k for run in self.runs for k in run.metrics}


def read_run(metrics_path: Path) -> Run:
    run_dir = metrics_path.parent
    try:
        metrics = {k: float(v) for k, v in json.loads(metrics_path.read_text(encoding="utf-8")).items()}
    except (json.JSONDecodeError, TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"{metrics_path}: not a metrics file ({e})") from None
    return Run(run_dir, read_run_record(run_dir), metrics, load_yaml(run_dir / ".hydra" / "config.yaml", {}))


def find_runs(dirs: list[str | Path]) -> list[Run]:
    runs = []
    for d in map(Path, dirs):
        if not d.exists():
            raise FileNotFoundError(f"no such directory: {d}")
        paths = [d] if d.is_file() else sorted(d.rglob("metrics.json"))
        runs += [read_run(p) for p in paths if ".hydra" not in p.parts]
    return runs


def group_runs(runs: list[Run], key: Callable[[Run], Row | None] | None = None) -> dict[str, list[Row]]:
    """{task: rows}, sorted; a row the runs whose `key` (a row without runs; None: left out) is equal. By
    default the report's: a run's experiment (or model) and settings, and its data files where they name its
    task's rows (its runs differ in them, or some are not the release's)."""
    if key is None:
        files = {(run.task, run.data_name) for run in runs}
        naming = {task for task, _ in files if sum(t == task for t, _ in files) > 1}
        naming |= {run.task for run in runs if run.foreign_data}

        def key(run: Run) -> Row:
            experiment = run.record.experiment
            name = experiment.rsplit("/", 1)[-1] if experiment else run.model
            data = run.data_name if run.task in naming else None
            return Row(run.task, name, run.model, experiment, run.settings, data=data)

    rows: dict[Row, Row] = {}
    for run in runs:
        if (row := key(run)) is not None:
            rows.setdefault(row, row).runs.append(run)
    by_task: dict[str, list[Row]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: (r.task, r.name, r.model, r.shown, r.kind, r.aside)):
        by_task[row.task].append(row)
    return dict(by_task)
