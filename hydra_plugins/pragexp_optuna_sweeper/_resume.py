"""The resumable sweep: how an interrupted Optuna sweep goes on where it stopped.

With a storage (SQLite under the sweep dir), running the same command again with the same
`hydra.sweep.dir` reopens the study and:
- counts the trials already finished and runs only the rest (`n_trials` is the study's total);
- fails the trials that an interrupted sweep left running and queues their parameters again, so no
  trial is lost; finished trials are never run again;
- names each job's dir after its trial number, so the new jobs never overwrite the old ones;
- draws fresh random numbers: a seeded sampler restarted from its seed would propose the first trials'
  parameters again.
One sweeper process per study: a trial left RUNNING is taken to belong to an interrupted sweep.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import optuna
from hydra_plugins.hydra_optuna_sweeper._impl import OptunaSweeperImpl
from omegaconf import OmegaConf
from optuna.trial import TrialState

from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)
FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)


class ResumableSweep(OptunaSweeperImpl):
    def sweep(self, arguments: list[str]) -> None:
        # Hydra's basic sweeper leaves the sweep's config in multirun.yaml, and pragexp.report looks for it.
        # SQLite creates its file but not the dir.
        atomic_write_text(Path(str(self.sweep_dir)) / "multirun.yaml", OmegaConf.to_yaml(self.config))
        target = self.n_trials
        if self.storage is not None:
            study = optuna.create_study(
                study_name=self.study_name,
                storage=self.storage,
                directions=self._get_directions(),
                load_if_exists=True,
            )
            self._requeue_interrupted(study)
            finished = sum(t.state in FINISHED for t in study.trials)
            self.n_trials = max(0, target - finished)
            if study.trials:
                log.info(
                    f"Resuming study {study.study_name}: {finished} of {target} trials finished, "
                    f"{self.n_trials} to run"
                )
                if hasattr(self.sampler, "reseed_rng"):
                    self.sampler.reseed_rng()
        super().sweep(arguments)

    @staticmethod
    def _requeue_interrupted(study: optuna.Study) -> None:
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            study.tell(trial.number, state=TrialState.FAIL)
            with warnings.catch_warnings():  # enqueue_trial is marked experimental in Optuna 2.10
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                study.enqueue_trial(trial.params)
            log.warning(f"Trial {trial.number} was interrupted: its parameters {trial.params} run again")

    def _configure_trials(self, trials, search_space_distributions, fixed_params):
        # The launcher numbers jobs from job_idx: start from the first trial's number, so that a job's
        # dir (hydra.sweep.subdir = job number) is its trial's number, on a first run and on a resume.
        numbers = [t.number for t in trials]
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            raise RuntimeError(f"trials {numbers} are not consecutive: is another sweeper using this study?")
        self.job_idx = numbers[0]
        return super()._configure_trials(trials, search_space_distributions, fixed_params)
