"""The search space of `hparams_search=optuna`, set around each task's own settings.

The learning rates that suit a task differ by orders of magnitude (3e-5 to fine-tune BERT on Circa,
1e-3 for a GRICE memory network trained from scratch), so the space is centred on the task's configured
values rather than fixed: pragexp's Optuna sweeper calls `around_task_settings` for every trial
(`hydra.sweeper.custom_search_space`), with the ranges of the config's `tune` node.
"""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf


def around_task_settings(cfg: DictConfig, trial) -> None:
    """Suggests, for the parameters the task has and the command line did not already sweep or fix:
    - `optimizer.lr`: log-uniform over [lr / lr_span, lr * lr_span] around the task's lr;
    - `data.batch_size`: one of the task's batch size times each of `batch_size_scales`;
    - `model.dropout`: uniform over the `dropout` range, for models that have a dropout."""
    tune = cfg.tune
    taken = set(trial.params) | set(trial.user_attrs)  # hydra.sweeper.params and fixed overrides win
    lr = OmegaConf.select(cfg, "optimizer.lr")
    if lr is not None and "optimizer.lr" not in taken:
        span = float(tune.lr_span)
        trial.suggest_float("optimizer.lr", float(lr) / span, float(lr) * span, log=True)
    batch_size = OmegaConf.select(cfg, "data.batch_size")
    if batch_size is not None and "data.batch_size" not in taken:
        sizes = sorted({max(1, round(int(batch_size) * float(s))) for s in tune.batch_size_scales})
        trial.suggest_categorical("data.batch_size", sizes)
    dropout = OmegaConf.select(cfg, "model.dropout")
    if dropout is not None and "model.dropout" not in taken:
        low, high = (float(x) for x in tune.dropout)
        trial.suggest_float("model.dropout", low, high)
