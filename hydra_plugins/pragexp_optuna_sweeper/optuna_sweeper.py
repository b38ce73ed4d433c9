"""pragexp's Optuna sweeper for Hydra: `hparams_search=optuna` names it (conf/hparams_search/optuna.yaml).

Optuna's ask-and-tell API drives Hydra's launcher (one job per trial, through whichever launcher the
command names: this process, submitit_local, SLURM); the study lives in Optuna's RDB storage (SQLite in
the sweep dir), so a sweep run again with the same dir goes on where it stopped. `_study.py` says how.

Hydra imports this module on every start to discover plugins, so it stays light: Optuna is imported only
when a sweep begins. (No `from __future__ import annotations`: Hydra loads plugin modules without
registering them, and dataclasses then cannot read string annotations.)"""

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


@dataclass
class OptunaSweeperConf:
    _target_: str = "hydra_plugins.pragexp_optuna_sweeper.optuna_sweeper.OptunaSweeper"
    direction: Any = "maximize"  # or a list, one per value the job returns: ["maximize", "minimize"]
    study_name: Any = None
    storage: Any = None  # an Optuna storage URL (sqlite:///...); None: in memory, no resume
    n_trials: int = 20  # the number of finished trials the study ends with
    n_jobs: int = 1  # trials launched together
    max_failure_rate: float = 0.0
    sampler: Any = field(default_factory=lambda: {"_target_": "optuna.samplers.TPESampler"})
    pruner: Any = None  # {_target_: optuna.pruners.MedianPruner}: the jobs ask it (pragexp.training.pruning)
    params: Any = field(default_factory=dict)  # Hydra's sweep syntax, name: "interval(0,1)"
    custom_search_space: Any = None  # "module.function", called with (config, trial) for every trial


ConfigStore.instance().store(
    group="hydra/sweeper", name="pragexp_optuna", node=OptunaSweeperConf, provider="pragexp"
)


class OptunaSweeper(Sweeper):
    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        from hydra.core.plugins import Plugins

        self.config = config
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: list[str]) -> None:
        from ._study import StudySweep

        StudySweep(self.config, self.launcher, **self.settings).run(arguments)
