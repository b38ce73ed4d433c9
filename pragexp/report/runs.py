"""Run directories: reading them and grouping runs that differ only in seed (or fold) into rows."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pragexp.utils.command_line import RENAMED
from pragexp.utils.instantiate import LAUNCH_OVERRIDES
from pragexp.utils.io import load_yaml
from pragexp.utils.results import DATA_LOCATION

VARYING = ("seed", "data.fold")  # what a row averages over
IGNORED_PREFIXES = (
    *LAUNCH_OVERRIDES,
    "print_config=",
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


def read_run(metrics_path: Path) -> Run:
    run_dir = metrics_path.parent
    try:
        metrics = {k: float(v) for k, v in json.loads(metrics_path.read_text(encoding="utf-8")).items()}
    except (json.JSONDecodeError, TypeError, ValueError) as e:
        raise ValueError(f"{metrics_path}: not a metrics file ({e})") from None
    hydra_dir = run_dir / ".hydra"
    choices = load_yaml(hydra_dir / "hydra.yaml", {}).get("hydra", {}).get("runtime", {}).get("choices", {})
    overrides = [str(o) for o in load_yaml(hydra_dir / "overrides.yaml", [])]
    explicit = dict(o.split("=", 1) for o in overrides if "=" in o)
    task = choices.get("task") or explicit.get("task") or "unknown"
    task = RENAMED["task"].get(task, task)  # runs made before a task was renamed join its new name
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
    config = load_yaml(hydra_dir / "config.yaml", {})
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


# The released files' own names, per task and setting: a row on one of them (all the task's runs alike) need
# not say so. Tasks not listed here always name their data files.
RELEASE_FILES = {
    "circa": {"data.path": ("circa-data.tsv",)},
    "nli": {
        "data.train_path": ("multinli_1.0_train.jsonl", "multinli_1.0_train.txt", "train.tsv"),
        "data.val_path": ("multinli_1.0_dev_mismatched.jsonl", "multinli_1.0_dev_mismatched.txt"),
        "data.test_path": (
            "multinli_1.0_dev_matched.jsonl",
            "multinli_1.0_dev_matched.txt",
            "dev_matched.tsv",
        ),
    },
    "boolq": {"data.train_path": ("train.jsonl",), "data.test_path": ("dev.jsonl",)},
}


def data_file_name(value: str) -> str | None:
    """A data location as the file's name, without its directory: `/x/circa-7-scenarios.tsv` ->
    `circa-7-scenarios.tsv`, `[a/b.json,c.json]` -> `b.json+c.json`; None for null (the hub copy)."""
    value = value.strip().strip("'\"")
    if value.lower() in ("", "null", "none"):
        return None
    parts = value[1:-1].split(",") if value.startswith("[") and value.endswith("]") else [value]
    return "+".join(Path(p.strip().strip("'\"").rstrip("/")).name or p.strip() for p in parts)


def data_setting_text(key: str, name: str) -> str:
    """How a row names its data file: `data: circa-7-scenarios.tsv`, `data.test_path: dev.jsonl`."""
    return f"{'data' if key == 'data.path' else key}: {name}"


def _data_files(run: Run) -> dict[str, str | None]:
    """{data location key: its file name} of the run's command line."""
    pairs = (s.split("=", 1) for s in run.settings if "=" in s)
    return {key: data_file_name(value) for key, value in pairs if DATA_LOCATION.match(key)}


def _named_data_keys(runs: list[Run]) -> set[tuple[str, str]]:
    """(task, key) of the data locations that name a row: where the task's runs differ in the file's name,
    or where a name is not the release's own."""
    names: dict[tuple[str, str], set] = defaultdict(set)
    for run in runs:
        for key, name in _data_files(run).items():
            names[run.task, key].add(name)
    for run in runs:  # a run without the setting reads the default (the hub copy)
        for task, key in names:
            if task == run.task and key not in _data_files(run):
                names[task, key].add(None)
    named = set()
    for (task, key), found in names.items():
        release = RELEASE_FILES.get(task, {}).get(key, ())
        if len(found) > 1 or any(n is not None and n not in release for n in found):
            named.add((task, key))
    return named


def row_settings(run: Run, named: set[tuple[str, str]]) -> tuple[str, ...]:
    """The run's settings as its row shows them: a data location by its file's name (after the others),
    where it names the row, else not at all (runs in other directories of the same file are one row)."""
    files = _data_files(run)
    kept = tuple(s for s in run.settings if s.split("=", 1)[0] not in files)
    data = tuple(
        data_setting_text(key, name)
        for key, name in sorted(files.items())
        if name is not None and (run.task, key) in named
    )
    return kept + data


def group_runs(runs: list[Run]) -> dict[str, list[Row]]:
    """{task: rows}, rows keyed by everything but seed and fold (and the data files' directories)."""
    named = _named_data_keys(runs)
    rows: dict[tuple, Row] = {}
    for run in runs:
        name = run.experiment.rsplit("/", 1)[-1] if run.experiment else run.model
        settings = row_settings(run, named)
        key = (run.task, name, run.model, settings)
        rows.setdefault(key, Row(run.task, name, run.model, run.experiment, settings)).runs.append(run)
    by_task: dict[str, list[Row]] = defaultdict(list)
    for key in sorted(rows):
        by_task[key[0]].append(rows[key])
    return dict(by_task)
