"""Run directories: reading them and grouping runs that differ only in seed (or fold) into rows."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from pragexp.utils.command_line import RENAMED_TASKS
from pragexp.utils.instantiate import LAUNCH_OVERRIDES

VARYING = ("seed", "data.fold")  # what a row averages over
IGNORED_PREFIXES = (
    *LAUNCH_OVERRIDES,
    "paths.",
    "logger",
    "callbacks.progress_bar",
    "ckpt_path",
    "model.inference_ckpt",
    "task=",
    "model=",
    "experiment=",
    "trainer.accelerator",
    "trainer.devices",
)


@dataclass
class Run:
    path: Path
    task: str
    model: str
    experiment: str | None
    settings: tuple[str, ...]  # overrides that make a different row
    metrics: dict[str, float]
    config: dict = field(default_factory=dict)  # the run's composed config (.hydra/config.yaml)


@dataclass
class Row:
    task: str
    name: str
    model: str
    experiment: str | None
    settings: tuple[str, ...]
    runs: list[Run] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name + (f" ({', '.join(self.settings)})" if self.settings else "")

    @property
    def metric_keys(self) -> set[str]:
        return {k for run in self.runs for k in run.metrics}


def _load_yaml(path: Path, default):
    if not path.is_file():
        return default
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f) or default


def read_run(metrics_path: Path) -> Run:
    run_dir = metrics_path.parent
    try:
        metrics = {k: float(v) for k, v in json.loads(metrics_path.read_text(encoding="utf-8")).items()}
    except (json.JSONDecodeError, TypeError, ValueError) as e:
        raise ValueError(f"{metrics_path}: not a metrics file ({e})") from None
    hydra_dir = run_dir / ".hydra"
    choices = _load_yaml(hydra_dir / "hydra.yaml", {}).get("hydra", {}).get("runtime", {}).get("choices", {})
    overrides = [str(o) for o in _load_yaml(hydra_dir / "overrides.yaml", [])]
    explicit = dict(o.split("=", 1) for o in overrides if "=" in o)
    task = choices.get("task") or explicit.get("task") or "unknown"
    task = RENAMED_TASKS.get(task, task)  # runs made before a task was renamed join its new name
    model = choices.get("model") or explicit.get("model") or "unknown"
    experiment = choices.get("experiment") or explicit.get("experiment")
    if experiment in ("none", None):
        experiment = None
    settings = tuple(
        sorted(
            o.lstrip("+~")
            for o in overrides
            if not o.lstrip("+~").startswith(IGNORED_PREFIXES)
            and o.lstrip("+~").split("=", 1)[0] not in VARYING
        )
    )
    config = _load_yaml(hydra_dir / "config.yaml", {})
    return Run(run_dir, task, model, experiment, settings, metrics, config)


def find_runs(dirs: list[str | Path]) -> list[Run]:
    runs = []
    for d in dirs:
        d = Path(d)
        if not d.exists():
            raise FileNotFoundError(f"no such directory: {d}")
        paths = [d] if d.is_file() else sorted(d.rglob("metrics.json"))
        runs += [read_run(p) for p in paths if ".hydra" not in p.parts]
    return runs


def group_runs(runs: list[Run]) -> dict[str, list[Row]]:
    """{task: rows}, rows keyed by everything but seed and fold."""
    rows: dict[tuple, Row] = {}
    for run in runs:
        name = run.experiment.rsplit("/", 1)[-1] if run.experiment else run.model
        key = (run.task, name, run.model, run.settings)
        rows.setdefault(key, Row(run.task, name, run.model, run.experiment, run.settings)).runs.append(run)
    by_task: dict[str, list[Row]] = defaultdict(list)
    for key in sorted(rows):
        by_task[key[0]].append(rows[key])
    return dict(by_task)


def summarise(values: list[float]) -> dict[str, float]:
    out = {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values)}
    out["std"] = statistics.stdev(values) if len(values) > 1 else 0.0
    return out


def config_value(config: dict, dotted: str):
    """`config["data"]["labels"]` for "data.labels"; None when a part is missing."""
    value = config
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
