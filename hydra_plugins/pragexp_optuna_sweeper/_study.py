"""One sweep of an Optuna study: ask Optuna for `n_jobs` trials, launch them as Hydra jobs, tell it what
each job returned, until the study has `n_trials` finished trials.

- A job returns its value (`optimized_metric`), or one per objective (a list, with `direction` a list);
  a job that the study's pruner stopped (`optuna.TrialPruned`, raised by pragexp.training.pruning) is
  PRUNED; any other error FAILs its trial, and more failures than `max_failure_rate` stop the sweep.
- A job that ended without a result (cancelled with scancel, killed, lost with its node, preempted past its
  requeues: submitit's launcher then raises for its batch) FAILs its trial, which is not the parameters'
  fault: they are queued to run again, once, as the next trial, and the sweep goes on to its budget (a
  second kill of the same parameters counts as a failure). A trial of that batch whose job had finished
  is told its metrics.json.
- With a storage, running the same command again with the same `hydra.sweep.dir` reopens the study: it
  counts the finished trials (complete or pruned) and runs only the rest; the trials an interrupted sweep
  left RUNNING are failed and their parameters queued again, so none is lost and none runs twice; a seeded
  sampler draws fresh numbers (restarted from its seed it would propose the first trials again).
- Each job's dir (the launcher's job number) is its trial's number, on a first run and on a resume.
- At the end, `optimization_results.yaml` in the sweep dir: the best trial (for several objectives, the
  Pareto front), its values, parameters, job dir and command-line overrides.
One sweeper process per study: a RUNNING trial is taken to belong to an interrupted sweep.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from pathlib import Path
from typing import Any

import optuna
import yaml
from hydra.core.utils import JobReturn, JobStatus
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from optuna.trial import FrozenTrial, TrialState

from pragexp.utils.io import atomic_write_text

from ._search_space import parse

log = logging.getLogger(__name__)
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)


class StudySweep:
    def __init__(self, config: DictConfig, launcher, **settings: Any) -> None:
        self.config, self.launcher = config, launcher
        self.sweep_dir = Path(str(config.hydra.sweep.dir))
        self.settings = settings
        direction = settings["direction"]
        self.directions = [direction] if isinstance(direction, str) else list(direction)
        extend = settings.get("custom_search_space")
        self.extend = _function(extend) if extend else None
        self.retried: set[tuple] = set()  # the parameters of killed trials queued again (once each)

    def run(self, arguments: list[str]) -> None:
        # Hydra's basic sweeper leaves the sweep's config in multirun.yaml, and pragexp.report looks for it.
        atomic_write_text(self.sweep_dir / "multirun.yaml", OmegaConf.to_yaml(self.config))
        params = [f"{k}={v}" for k, v in (self.settings.get("params") or {}).items()]
        distributions, fixed = parse([*params, *arguments])
        study = self._open_study()
        finished = sum(t.state in FINISHED for t in study.trials)
        to_go = max(0, int(self.settings["n_trials"]) - finished)
        log.info(
            f"Study {study.study_name}: {finished} of {self.settings['n_trials']} trials finished, {to_go} "
            "to run"
        )
        while to_go > 0:
            trials = [
                study.ask(fixed_distributions=distributions)
                for _ in range(min(to_go, int(self.settings["n_jobs"])))
            ]
            returns = self._launch(trials, fixed)
            to_go -= len(trials) - self._tell(study, trials, returns)
        self._write_results(study)

    def _launch(self, trials: list[optuna.Trial], fixed: dict[str, str]) -> list:
        """The jobs' returns; for a batch the launcher gave no returns for (submitit raises when one of its
        jobs ended without a result: cancelled, killed, lost with its node), what each job left: its
        metrics.json (it finished), or nothing (`Killed`)."""
        overrides, first = [self._overrides(trial, fixed) for trial in trials], _first_number(trials)
        try:
            return self.launcher.launch(overrides, initial_job_idx=first)
        except Exception as error:
            log.warning(f"The launcher gave no results for trials {[t.number for t in trials]}: {error!r}")
            return [self._left(trial, error) for trial in trials]

    def _left(self, trial: optuna.Trial, error: Exception):
        metrics = self.sweep_dir / str(trial.number) / "metrics.json"
        if not metrics.is_file():
            return Killed(error)
        wanted = self.config.get("optimized_metric")
        values = json.loads(metrics.read_text())
        value = [values.get(k) for k in wanted] if OmegaConf.is_list(wanted) else values.get(wanted)
        return JobReturn(status=JobStatus.COMPLETED, _return_value=value)

    def _open_study(self) -> optuna.Study:
        sampler = self.settings["sampler"]  # Hydra instantiates the sweeper's config, sampler included
        if isinstance(sampler, (dict, DictConfig)):
            sampler = instantiate(sampler)
        study = optuna.create_study(
            study_name=self.settings.get("study_name"),
            storage=self.settings.get("storage"),
            sampler=sampler,
            directions=self.directions,
            load_if_exists=True,
        )
        if study.trials and hasattr(sampler, "reseed_rng"):
            sampler.reseed_rng()
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            study.tell(trial.number, state=TrialState.FAIL)
            study.enqueue_trial(trial.params, user_attrs=trial.user_attrs)
            log.warning(f"Trial {trial.number} was interrupted: its parameters {trial.params} run again")
        return study

    def _overrides(self, trial: optuna.Trial, fixed: dict[str, str]) -> list[str]:
        for key, value in fixed.items():
            trial.set_user_attr(key, value)  # so the search space extension leaves them alone
        if self.extend is not None:
            self.extend(self.config, trial)
        overlap = trial.params.keys() & fixed.keys()
        if overlap:
            raise ValueError(f"{sorted(overlap)}: both searched and fixed")
        return [f"{k}={v}" for k, v in trial.params.items()] + [f"{k}={v}" for k, v in fixed.items()]

    def _tell(self, study: optuna.Study, trials: list[optuna.Trial], returns: list) -> int:
        """Tells the study each trial's end; returns the number of trials queued to run again."""
        failures, again = [], 0
        for trial, ret in zip(trials, returns, strict=True):
            if isinstance(ret, Killed) and self._run_again(study, trial, ret.error):
                again += 1
                continue
            if isinstance(ret, Killed):
                error = ret.error
            elif ret.status == JobStatus.COMPLETED:
                values = self._values(ret.return_value)
                if values is not None:
                    study.tell(trial, values=values)
                    continue
                error = ValueError(
                    f"trial {trial.number} returned {ret.return_value!r}: not a number per objective"
                )
            else:
                error = ret._return_value  # the job's exception (reading return_value would raise it)
                if isinstance(error, optuna.TrialPruned):
                    study.tell(trial, state=TrialState.PRUNED)
                    log.info(f"Trial {trial.number} pruned: {error}")
                    continue
            study.tell(trial, state=TrialState.FAIL)
            log.warning(f"Trial {trial.number} failed: {error!r}")
            failures.append(error)
        if failures and len(failures) / len(returns) > float(self.settings["max_failure_rate"]):
            raise RuntimeError(
                f"{len(failures)} of {len(returns)} trials failed (max_failure_rate="
                f"{self.settings['max_failure_rate']}); the first: {failures[0]!r}"
            ) from failures[0]
        return again

    def _run_again(self, study: optuna.Study, trial: optuna.Trial, error: Exception) -> bool:
        """A trial whose job was killed is FAIL, and its parameters are queued to run again, once (a second
        kill of the same parameters counts as a failure: a job killed for its memory would be every time)."""
        key = tuple(sorted(trial.params.items()))
        if key in self.retried:
            return False
        self.retried.add(key)
        study.tell(trial, state=TrialState.FAIL)
        study.enqueue_trial(trial.params, user_attrs=trial.user_attrs)
        log.warning(
            f"Trial {trial.number}'s job ended without a result ({error!r}): its parameters run again"
        )
        return True

    def _values(self, returned: Any) -> list[float] | None:
        values = (
            list(returned)
            if isinstance(returned, (list, tuple)) or OmegaConf.is_list(returned)
            else [returned]
        )
        try:
            values = [float(v) for v in values]
        except (TypeError, ValueError):
            return None
        if len(values) != len(self.directions) or any(math.isnan(v) for v in values):
            return None
        return values

    def _write_results(self, study: optuna.Study) -> None:
        best = study.best_trials if _any_complete(study) else []
        results = {
            "study": study.study_name,
            "directions": self.directions,
            "trials": {s.name.lower(): sum(t.state == s for t in study.trials) for s in TrialState},
            "best": [self._describe(t) for t in best],
        }
        atomic_write_text(
            self.sweep_dir / "optimization_results.yaml", yaml.safe_dump(results, sort_keys=False)
        )
        for trial in best:
            log.info(f"Best: trial {trial.number}, values {trial.values}, {trial.params}")

    def _describe(self, trial: FrozenTrial) -> dict:
        overrides = [f"{k}={v}" for k, v in {**trial.params, **trial.user_attrs}.items()]
        return {
            "trial": trial.number,
            "values": trial.values,
            "params": dict(trial.params),
            "job_dir": str(self.sweep_dir / str(trial.number)),
            "config": str(self.sweep_dir / str(trial.number) / ".hydra" / "config.yaml"),
            "overrides": overrides,
        }


class Killed:
    """A trial's job that ended without a result (no return from the launcher, no metrics.json)."""

    def __init__(self, error: Exception):
        self.error = error


def _any_complete(study: optuna.Study) -> bool:
    return any(t.state == TrialState.COMPLETE for t in study.trials)


def _first_number(trials: list[optuna.Trial]) -> int:
    # The launcher numbers jobs from initial_job_idx, so a job's dir (hydra.sweep.subdir = job number) is its
    # trial's number.
    numbers = [t.number for t in trials]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise RuntimeError(f"trials {numbers} are not consecutive: is another sweeper using this study?")
    return numbers[0]


def _function(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)
