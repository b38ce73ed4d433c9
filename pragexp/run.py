"""run(cfg): build the data module, task, loggers and trainer from a composed config, then train,
validate the best checkpoint and test it (or, for `pragexp.eval` and evaluation-only tasks, only
test, and validate too when the config says `validate: true`). Returns the metrics and writes
`metrics.json`."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytorch_lightning as pl
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

import pragexp
from pragexp.tasks.base import TrainableTask
from pragexp.utils import checkpoint
from pragexp.utils.config_tree import print_config_tree
from pragexp.utils.hub import check_hub_models
from pragexp.utils.instantiate import build_callbacks, build_loggers, public_config
from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)
# conf/ sits beside the package (editable install); an absolute path works however main() is called.
CONFIG_DIR = Path(__file__).resolve().parent.parent / "conf"
SUMMARY_PREFIX = "pragexp:"
LIGHTNING_NAMES = ("last", "best", "hpc", "registry")
_first_job = True


def check_model_fits_task(cfg: DictConfig) -> None:
    supported = cfg.get("supported_models")
    if supported and cfg.get("model_name") not in supported:
        raise ValueError(
            f"model={cfg.model_name} does not fit task={cfg.task_name}; choose one of: {', '.join(supported)}"
        )


def job_started() -> float:
    """When the job an entry point is about to run began (`time.monotonic()`): the process's start for
    its first job, imports included; now for the later jobs of a multirun."""
    global _first_job
    first, _first_job = _first_job, False
    return pragexp.STARTED if first else time.monotonic()


def run(cfg: DictConfig, started: float | None = None) -> dict[str, float]:
    """`started`: when the job began, for the wall time in the summary line; by default now. The job runs
    with `cfg.threads` CPU threads (if set); the process's setting is restored afterwards."""
    started = time.monotonic() if started is None else started
    threads = torch.get_num_threads()
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg.threads))
    try:
        return _run(cfg, started)
    finally:
        torch.set_num_threads(threads)


def _run(cfg: DictConfig, started: float) -> dict[str, float]:
    check_model_fits_task(cfg)
    ckpt_path = cfg.get("ckpt_path")
    if cfg.get("print_config", True):
        print_config_tree(cfg)
    if cfg.get("seed") is not None:
        pl.seed_everything(int(cfg.seed), workers=True)  # honoured when 0
    # 'last', 'best', ... are Lightning's names for checkpoints of this run; it resolves them.
    saved = checkpoint.read(ckpt_path) if ckpt_path and ckpt_path not in LIGHTNING_NAMES else None
    if saved is not None:
        saved.check_task(cfg.task_name)  # a Circa checkpoint is no NLI model, though both are classifiers

    model_cfg = cfg.get("model")
    if saved is not None and saved.model_config:  # the weights decide the architecture
        model_cfg = OmegaConf.create(saved.model_config)
        if model_cfg.get("_target_") != (cfg.get("model") or {}).get("_target_"):
            log.warning(
                "using the checkpoint's model %s, not %s",
                model_cfg.get("_target_"),
                (cfg.get("model") or {}).get("_target_"),
            )
    check_hub_models(
        cfg, model=model_cfg
    )  # offline, a hub model not in the cache stops the run before any work

    datamodule = instantiate(cfg.data)
    if saved is not None:
        state = saved.datamodule_state(type(datamodule).__qualname__)
        if state:
            datamodule.load_state_dict(state)

    task_args = {"model": instantiate(model_cfg)} if model_cfg is not None else {}
    if cfg.get("optimizer") is not None:  # evaluation-only tasks have none
        task_args["optimizer"] = instantiate(cfg.optimizer)
        task_args["scheduler"] = instantiate(cfg.scheduler) if cfg.get("scheduler") else None
    task = instantiate(cfg.task, **task_args)
    train = bool(cfg.get("train", True))
    # Evaluating without a checkpoint: fine for a model with no weights to learn (oracle, lead, majority);
    # one that reads the training data (majority counts its labels) makes that pass first.
    observe_first = False
    if isinstance(task, TrainableTask) and not train and not ckpt_path:
        if task.model_learns_weights:
            raise ValueError(
                f"evaluation needs a trained model: pass ckpt_path=<path to a .ckpt file> "
                f"(model={cfg.get('model_name')} learns weights; the oracle, lead and majority baselines do not)"
            )
        observe_first = task.model_observes_data
    # Set after instantiate: Hydra would turn a dict holding `_target_` passed as an argument into an object.
    task.model_config = OmegaConf.to_container(model_cfg, resolve=True) if model_cfg is not None else None
    task.task_name = cfg.get("task_name")
    loggers = build_loggers(cfg.get("logger"))
    callbacks = build_callbacks(cfg.get("callbacks"), has_logger=bool(loggers))
    trainer: pl.Trainer = instantiate(cfg.trainer, logger=loggers or False, callbacks=callbacks)
    for logger in loggers:
        logger.log_hyperparams(public_config(cfg))

    metrics: dict[str, float] = {}
    try:
        # Checkpoints are data: Lightning loads them with weights_only=True too (pragexp.utils.checkpoint).
        test_ckpt = ckpt_path
        if train or observe_first:
            trainer.fit(task, datamodule=datamodule, ckpt_path=ckpt_path, weights_only=True)
        if train:
            best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
            test_ckpt = best or None  # no checkpoint under fast_dev_run: use the weights in memory
        if train or cfg.get("validate", False):
            for results in trainer.validate(
                task, datamodule=datamodule, ckpt_path=test_ckpt, verbose=False, weights_only=True
            ):
                metrics.update(results)
        if cfg.get("test", True):
            for results in trainer.test(
                task, datamodule=datamodule, ckpt_path=test_ckpt, verbose=False, weights_only=True
            ):
                metrics.update(results)
    finally:
        _finish_wandb(loggers)

    metrics = {k: float(v) for k, v in sorted(metrics.items())}
    if trainer.is_global_zero:
        output_dir = Path(cfg.paths.output_dir)
        atomic_write_text(output_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
        print(summary_line(cfg, metrics, output_dir, time.monotonic() - started), flush=True)
    return metrics


def summary_line(cfg: DictConfig, metrics: dict[str, float], output_dir: Path, seconds: float) -> str:
    """One line with the overall test metrics (per-group ones are in metrics.json), where the run's
    files are and its wall time."""
    headline = {k: v for k, v in metrics.items() if k.startswith("test/") and k.count("/") == 1}
    body = " ".join(f"{k}={v:.4f}" if k != "test/count" else f"{k}={int(v)}" for k, v in headline.items())
    return f"{SUMMARY_PREFIX} {cfg.get('task_name')}/{cfg.get('model_label')} {body} ({output_dir}, {duration(seconds)})"


def duration(seconds: float) -> str:
    """'4 min 12 s', or '52 s' under a minute."""
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def _finish_wandb(loggers: list) -> None:
    """Close the W&B run so the next job of a multirun starts its own run."""
    if any(type(lg).__name__ == "WandbLogger" for lg in loggers):
        import wandb

        wandb.finish()
