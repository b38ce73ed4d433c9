"""A suite's entries as jobs: each entry (`suite.benchmarks.<name>: {task, overrides}`) with the command
line's own settings and the suite's item limit, its sweeps expanded (one job per combination, as Hydra's
basic sweeper expands them), each job's config composed before anything runs. A bad entry (no task, an
unknown task or key, an override that does not compose) stops the suite naming the file that holds the
entry and the entry."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from pragexp import CONFIG_DIR

ENTRY_KEYS = ("task", "overrides")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")  # an entry's name is its run dir's name


class SuiteError(ValueError):
    pass


@dataclass
class Job:
    entry: str  # the suite's entry
    name: str  # its run dir under the sweep dir: the entry's name; `<entry>-<k>` for the k-th job of a sweep
    overrides: list[str]  # the job's command line (no hydra.* settings)
    config: DictConfig | None = None  # composed as the job will be


def suite_file(config: DictConfig) -> Path:
    """The suite's config file (`experiment=suite/<name>`), in pragexp's conf/ or another config dir of the
    search path (`hydra.searchpath`)."""
    name = Path("experiment") / f"{config.hydra.runtime.choices.get('experiment')}.yaml"
    for source in OmegaConf.select(config, "hydra.runtime.config_sources", default=None) or []:
        if source.get("schema") == "file" and (Path(source.path) / name).is_file():
            return Path(source.path) / name
    return CONFIG_DIR / name


def entry_file(config: DictConfig, entry: str) -> Path:
    """The file that writes `entry`: the suite's own, or one of the suites beside it that it is made of."""
    own = suite_file(config)
    for path in [own, *sorted(own.parent.glob("*.yaml"))]:
        if path.is_file():
            benchmarks = ((yaml.safe_load(path.read_text()) or {}).get("suite") or {}).get("benchmarks") or {}
            if entry in benchmarks:
                return path
    return own


def own_settings(arguments: list[str]) -> list[str]:
    """The command line's settings that go to every job: all but the suite's choice and its `suite.*` keys."""
    return [a for a in arguments if not a.lstrip("+~").startswith(("experiment=suite/", "suite."))]


def limit_of(config: DictConfig) -> int | None:
    limit = OmegaConf.select(config, "suite.limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise SuiteError(f"suite.limit={limit!r}: a positive number of test items per benchmark, or null")
    return limit


def _tasks() -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / "task").glob("*.yaml") if not p.stem.startswith("_"))


def _entry_overrides(name: str, entry, where: str) -> list[str]:
    if not NAME.match(str(name)):
        raise SuiteError(f"{where}: the name is a run dir's: letters, digits, '_', '.', '-'")
    if not OmegaConf.is_dict(entry):
        raise SuiteError(f"{where}: expected {{task: <task>, overrides: [...]}}, got {entry!r}")
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        raise SuiteError(f"{where}: {unknown[0]!r} is not an entry's key ({', '.join(ENTRY_KEYS)})")
    task = entry.get("task")
    if task not in _tasks():
        raise SuiteError(f"{where}: task={task} is not a task; the tasks: {', '.join(_tasks())}")
    overrides = entry.get("overrides")
    overrides = OmegaConf.create([]) if overrides is None else overrides
    if not OmegaConf.is_list(overrides) or not all(isinstance(o, str) for o in overrides):
        raise SuiteError(f"{where}: overrides must be a list of key=value settings")
    return [f"task={task}", *overrides]


def suite_jobs(
    config: DictConfig, arguments: list[str], compose: Callable[[list[str]], DictConfig]
) -> list[Job]:
    """Every job of the suite, composed (`compose`: the job's overrides -> its config)."""
    benchmarks = OmegaConf.select(config, "suite.benchmarks") or {}
    if not benchmarks:
        raise SuiteError(f"{suite_file(config)}: suite.benchmarks is empty: no benchmark to run")
    limit, line = limit_of(config), own_settings(arguments)
    chosen = [a for a in line if a.lstrip("+~").split("=", 1)[0] == "task"]
    if chosen:
        raise SuiteError(f"{chosen[0]}: a suite's entries choose their tasks ({suite_file(config)})")
    parser = OverridesParser.create()
    jobs = []
    for name, entry in benchmarks.items():
        where = f"{entry_file(config, name)}, suite entry {name!r}"
        settings = [*_entry_overrides(name, entry, where), *line]
        settings += [f"data.limit={limit}"] if limit is not None else []
        try:
            (expanded,) = BasicSweeper.split_arguments(parser.parse_overrides(settings), None)
        except Exception as error:
            raise SuiteError(f"{where}: {error}") from None
        for k, overrides in enumerate(expanded):
            job = Job(name, name if len(expanded) == 1 else f"{name}-{k}", overrides)
            try:
                job.config = compose(overrides)
            except Exception as error:
                raise SuiteError(f"{where}: {' '.join(overrides)}: {error}") from None
            jobs.append(job)
    return jobs


def quoted(value: str) -> str:
    """A value as Hydra's override grammar reads it back unchanged, whatever its characters."""
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def launch_overrides(job: Job, sweep_dir: Path) -> list[str]:
    """The job's command line as launched: its settings, then its run dir, `<sweep dir>/<job name>`."""
    return [*job.overrides, f"hydra.sweep.dir={quoted(str(sweep_dir))}", f"hydra.sweep.subdir={job.name}"]
