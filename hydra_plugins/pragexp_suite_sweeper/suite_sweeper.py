"""pragexp's suite sweeper for Hydra: `experiment=suite/<name>` names it (conf/experiment/suite/_suite.yaml).

    python -m pragexp.eval -m experiment=suite/pragmatics [llm=... llm.model=...] [suite.limit=20]

A suite is data: `suite.benchmarks` maps a name to a task and its overrides. Why a sweeper (and not a
script that calls `pragexp.eval` per benchmark, nor Hydra's basic sweeper over `task=`): a sweeper is where
Hydra turns one command into jobs, and it hands them to whichever launcher the command names, so a suite
runs in this process, as local processes or as SLURM jobs (`launcher=slurm`) like any multirun; each job is
exactly the single command `python -m pragexp.eval task=<task> <overrides> <the line's settings>`, its run
dir `<sweep dir>/<name>`. The basic sweeper cannot pair each task with its own overrides (it takes the
product of its parameters), nor skip what is done, nor say what it will run and how far it is; and the
scorecard, which needs every job's results, belongs to the one process that sees them all (no
`on_multirun_end` callback is needed).

What it does, in order (`_jobs.py`, `_plan.py`): every job's config is composed first (a bad entry stops
the suite before anything runs, naming the suite's file and the entry); it prints the plan (each job, its
test items and requests, counted from its data module); it skips a job whose run dir holds a finished run
of the same overrides (`pragexp.runs.finished`: a stopped suite goes on where it stopped); it launches the
rest, one at a time with the basic launcher (progress after each: done/total, elapsed, time left) or all
together with another launcher (`hydra.sweeper.batch`); then it writes `scorecard.md` in the sweep dir
(pragexp.report's scorecard of the suite's runs: each benchmark beside its published rows, a row for the
model) and prints it. A job that fails does not stop the others: the scorecard is written from those that
finished, then the sweep fails naming each failed job and its dir.

Hydra imports this module on every start to discover plugins, so it stays light: the rest is imported when
a suite begins. (No `from __future__ import annotations`: Hydra loads plugin modules without registering
them, and dataclasses then cannot read string annotations.)"""

from dataclasses import dataclass
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


@dataclass
class SuiteSweeperConf:
    _target_: str = "hydra_plugins.pragexp_suite_sweeper.suite_sweeper.SuiteSweeper"
    batch: Any = None  # jobs launched together; None: one at a time with the basic launcher, else all at once
    count: bool = True  # count each job's test items and requests for the plan (sets its data module up)


ConfigStore.instance().store(
    group="hydra/sweeper", name="pragexp_suite", node=SuiteSweeperConf, provider="pragexp"
)


class SuiteSweeper(Sweeper):
    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        from hydra.core.plugins import Plugins

        self.config, self.hydra_context = config, hydra_context
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: list[str]) -> None:
        from ._run import SuiteRun

        SuiteRun(self.config, self.hydra_context, self.launcher, **self.settings).run(arguments)
