"""Pruning of Optuna trials from Lightning's validation metric (`hparams_search=optuna`, whose config puts
this callback among the trainer's).

After each validation, rank 0 reports the monitored metric to the trial (its intermediate values, by
epoch) and asks the study's pruner whether to stop; every rank gets the answer, and a trial to prune
raises `optuna.TrialPruned`, which ends the job without a metrics.json and which pragexp's Optuna sweeper
tells the study as PRUNED. The job finds its trial in the study's storage by number: the sweeper runs
each trial as the job of the same number (`hydra.job.num`). With no pruner, it only reports; a study of
several objectives neither (Optuna prunes single-objective studies only).
"""

from __future__ import annotations

from pytorch_lightning import Callback
from pytorch_lightning.trainer.states import TrainerFn


class OptunaPruning(Callback):
    def __init__(self, storage: str | None, study_name: str, trial: int, monitor: str, pruner=None):
        self.storage, self.study_name, self.number = storage, study_name, int(trial)
        self.monitor, self.pruner = monitor, pruner
        self._trial = None

    def trial(self):
        """The running trial of this job, from the study's storage (loaded once)."""
        if self._trial is None:
            import optuna

            pruner = self.pruner or optuna.pruners.NopPruner()  # Hydra built it (the config is recursive)
            study = optuna.load_study(study_name=self.study_name, storage=self.storage, pruner=pruner)
            # Optuna's own integrations build a Trial from its id this way; the number is what the job knows.
            trial_id = study._storage.get_trial_id_from_study_id_trial_number(study._study_id, self.number)
            self._trial = optuna.Trial(study, trial_id)
        return self._trial

    def on_validation_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or trainer.state.fn != TrainerFn.FITTING or self.storage is None:
            return  # only the validations of fitting, by epoch (not the best checkpoint's afterwards)
        prune, message = False, ""
        value = trainer.callback_metrics.get(self.monitor)
        if trainer.is_global_zero and value is not None and len(self.trial().study.directions) == 1:
            epoch, value = trainer.current_epoch, float(value)
            self.trial().report(value, step=epoch)
            prune = self.trial().should_prune()
            message = f"trial {self.number} pruned at epoch {epoch}: {self.monitor} = {value:.4f}"
        if trainer.world_size > 1:
            prune, message = trainer.strategy.broadcast((prune, message), src=0)
        if prune:
            import optuna

            raise optuna.TrialPruned(message)
