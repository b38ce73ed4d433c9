"""run(cfg): build the data module, task, loggers and trainer from a composed config, then train,
validate the best checkpoint and test it (or, for `pragexp.eval` and evaluation-only tasks, only
test, and validate too when the config says `validate: true`). Returns the metrics and writes
`metrics.json`, and beside it `run.json`: what the run was, as its pieces declare it (pragexp.runs.record)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import time
from pathlib import Path

import pytorch_lightning as pl
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

import pragexp
from pragexp.entry.composition import build_datamodule
from pragexp.entry.config_tree import print_config_tree
from pragexp.entry.instantiate import build_callbacks, build_loggers, public_config
from pragexp.generation.cache import answers, cached_backend
from pragexp.generation.cache.replay import MissingAnswers
from pragexp.metrics.uncertainty import is_uncertainty_key
from pragexp.pretrained import loaded
from pragexp.pretrained.hub import check_hub_models
from pragexp.runs import checkpoint
from pragexp.runs.record import write_run_record
from pragexp.training.checkpoints import DurableCheckpointIO
from pragexp.training.csv_log import ResumableCSVLogger
from pragexp.training.declaration import declare_run
from pragexp.training.resume import ExactResume
from pragexp.training.stopping import SignalStop, resume_requeued
from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)
SUMMARY_PREFIX = "pragexp:"
LIGHTNING_NAMES = ("last", "best", "hpc", "registry")
_first_job = True
SEED_VARS = ("PL_GLOBAL_SEED", "PL_SEED_WORKERS")  # what pl.seed_everything leaves in the environment


def check_model_fits_task(cfg: DictConfig) -> None:
    supported = cfg.get("supported_models")
    if supported and cfg.get("model_name") not in supported:
        raise ValueError(
            f"model={cfg.model_name} does not fit task={cfg.task_name}; choose one of: {', '.join(supported)}"
        )


def check_training_allowed(cfg: DictConfig) -> None:
    """A task whose data may be used for evaluation only (its config's `evaluation_only`: the reason, ToMATO's
    licence) refuses training and a fine-tuned LLM before anything is built."""
    reason = cfg.get("evaluation_only")
    tuned = str(OmegaConf.select(cfg, "llm.finetune", default="none") or "none") != "none"
    if reason and (cfg.get("train", True) or tuned):
        what = f"llm.finetune={cfg.llm.finetune}" if tuned else "pragexp.train"
        raise ValueError(f"task={cfg.get('task_name')} is for evaluation only ({reason}): {what} is refused")


def check_packages(cfg: DictConfig) -> None:
    """The optional packages a config needs, named before any work: pragexp imports each only where it is used
    (a run that does not use FAISS never pays its import), so a missing one would otherwise stop the run late
    (FAISS: after the whole corpus is encoded)."""
    if cfg.get("retriever") is not None and importlib.util.find_spec("faiss") is None:
        raise ImportError(
            "retrieval (retriever=...) needs FAISS: pip install faiss-cpu, or faiss-gpu (`make install` "
            "picks one)"
        )


def job_started() -> float:
    """When the job an entry point is about to run began (`time.monotonic()`): the process's start for
    its first job, imports included; now for the later jobs of a multirun."""
    global _first_job
    first, _first_job = _first_job, False
    return pragexp.STARTED if first else time.monotonic()


def run(cfg: DictConfig, started: float | None = None) -> dict[str, float]:
    """`started`: when the job began, for the wall time in the summary line; by default now. The job runs with
    `cfg.threads` CPU threads (if set); the process's setting is restored afterwards, and so are the seed
    Lightning leaves in the environment (a later job of a multirun seeds itself or not at all, as it would
    alone). A model the job does not tune may be the one an earlier job loaded (`pretrained.loaded`).

    SIGTERM, SIGINT (and submitit's preemption signal) stop the job cleanly: it says what it was doing and
    what it kept, and exits with 128 + the signal's number (`pragexp.training.stopping`)."""
    started = time.monotonic() if started is None else started
    threads, seed_vars = torch.get_num_threads(), {k: os.environ.get(k) for k in SEED_VARS}
    if cfg.get("threads"):
        torch.set_num_threads(int(cfg.threads))
    loaded.next_job()
    answers.forget()  # the keys this job uses of the response cache, for its answers.json
    train, output_dir = bool(cfg.get("train", True)), Path(cfg.paths.output_dir)
    try:
        with SignalStop(output_dir, train, kept=cached_backend.kept) as stop:
            if resume_requeued(output_dir, train, cfg.get("ckpt_path")):
                cfg.ckpt_path = "last"
            return _run(cfg, started, stop)
    except MissingAnswers as err:  # a replay without an answer: which task's
        err.task = cfg.get("task_name")
        raise
    finally:
        # Nothing of this job's reaches the next one of a multirun but the models `loaded` keeps.
        torch.set_num_threads(threads)
        # its lookup counts said and reset, even where it failed before its teardown
        cached_backend.close_caches()
        answers.forget()
        for var, value in seed_vars.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


def _run(cfg: DictConfig, started: float, stop: SignalStop) -> dict[str, float]:
    check_model_fits_task(cfg)
    check_training_allowed(cfg)
    check_packages(cfg)
    if cfg.get("print_config", True):
        print_config_tree(cfg)
    if cfg.get("seed") is not None:
        pl.seed_everything(int(cfg.seed), workers=True)  # honoured when 0
    saved = _saved_checkpoint(cfg)
    model_cfg = _model_config(cfg, saved)
    check_hub_models(
        cfg, model=model_cfg
    )  # offline, a hub model not in the cache stops the run before any work
    datamodule = build_datamodule(cfg, saved)
    task = _build_task(cfg, model_cfg)
    loggers = build_loggers(cfg.get("logger"))
    for logger in loggers:  # a resumed run's CSV log keeps the rows logged before the stop (`csv_log`)
        if isinstance(logger, ResumableCSVLogger):
            logger.resuming = bool(cfg.get("train", True) and cfg.get("ckpt_path"))
    # The stop's callback first: it holds signals before the other callbacks write the test's results.
    callbacks = [
        stop.callback,
        ExactResume(),
        *build_callbacks(cfg.get("callbacks"), has_logger=bool(loggers)),
    ]
    trainer: pl.Trainer = instantiate(
        cfg.trainer, logger=loggers or False, callbacks=callbacks, plugins=[DurableCheckpointIO()]
    )
    stop.trainer = trainer
    for logger in loggers:
        logger.log_hyperparams(public_config(cfg))
    try:
        metrics = _fit_and_test(cfg, trainer, task, datamodule)
    finally:
        _finish_wandb(loggers)
    metrics = {k: float(v) for k, v in sorted(metrics.items())}
    stop.finishing = True  # a signal from here on waits for metrics.json
    if trainer.is_global_zero:
        output_dir = Path(cfg.paths.output_dir)
        atomic_write_text(output_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
        write_run_record(output_dir, declare_run(cfg, task, datamodule, metrics))
    answers.write(Path(cfg.paths.output_dir), trainer.global_rank)  # which answers it used: `cache pack`
    if trainer.is_global_zero:
        print(summary_line(cfg, metrics, output_dir, time.monotonic() - started), flush=True)
    return metrics


def _saved_checkpoint(cfg: DictConfig) -> checkpoint.PragexpCheckpoint | None:
    """The checkpoint `ckpt_path` names, read as data and checked against the task; None for none or for
    Lightning's own names of this run's checkpoints ('last', 'best', ...), which it resolves itself."""
    ckpt_path = cfg.get("ckpt_path")
    if not ckpt_path or ckpt_path in LIGHTNING_NAMES:
        return None
    saved = checkpoint.read(ckpt_path)
    saved.check_task(cfg.task_name)  # a Circa checkpoint is no NLI model, though both are classifiers
    return saved


def _model_config(cfg: DictConfig, saved: checkpoint.PragexpCheckpoint | None) -> DictConfig | None:
    """The model's config: the checkpoint's when it has one (the weights decide the architecture)."""
    model_cfg = cfg.get("model")
    if saved is None or not saved.model_config:
        return model_cfg
    from_ckpt = OmegaConf.create(saved.model_config)
    if from_ckpt.get("_target_") != (model_cfg or {}).get("_target_"):
        log.warning(
            "using the checkpoint's model %s, not %s",
            from_ckpt.get("_target_"),
            (model_cfg or {}).get("_target_"),
        )
    return from_ckpt


def _build_task(cfg: DictConfig, model_cfg: DictConfig | None):
    task_args = {"model": instantiate(model_cfg)} if model_cfg is not None else {}
    if cfg.get("optimizer") is not None:  # evaluation-only tasks have none
        task_args["optimizer"] = instantiate(cfg.optimizer)
        task_args["scheduler"] = instantiate(cfg.scheduler) if cfg.get("scheduler") else None
    task = instantiate(cfg.task, **task_args)
    # Evaluating without a checkpoint: fine for a model with no weights to learn (oracle, lead, majority, a
    # frozen LLM).
    if not cfg.get("train", True) and not cfg.get("ckpt_path") and task.model_traits.learns_weights:
        raise ValueError(
            f"evaluation needs a trained model: pass ckpt_path=<path to a .ckpt file> "
            f"(model={cfg.get('model_name')} learns weights; the oracle, lead and majority baselines do not)"
        )
    # Set after instantiate: Hydra would turn a dict holding `_target_` passed as an argument into an object.
    task.model_config = OmegaConf.to_container(model_cfg, resolve=True) if model_cfg is not None else None
    task.task_name = cfg.get("task_name")
    return task


def _fit_and_test(cfg: DictConfig, trainer: pl.Trainer, task, datamodule) -> dict[str, float]:
    """Train (or, for a model that reads the training labels once, observe them), then validate and test the
    best checkpoint (or the one given). Checkpoints are data: Lightning loads them with weights_only=True
    too."""
    train, ckpt_path = bool(cfg.get("train", True)), cfg.get("ckpt_path")
    observe_first = not train and not ckpt_path and task.model_traits.observes_labels
    test_ckpt = ckpt_path
    if train or observe_first:
        trainer.fit(task, datamodule=datamodule, ckpt_path=ckpt_path, weights_only=True)
    if train:
        best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
        test_ckpt = best or None  # no checkpoint under fast_dev_run: use the weights in memory
    metrics: dict[str, float] = {}
    stages = [(trainer.validate, train or cfg.get("validate", False)), (trainer.test, cfg.get("test", True))]
    for stage, wanted in stages:
        if wanted:
            for results in stage(
                task, datamodule=datamodule, ckpt_path=test_ckpt, verbose=False, weights_only=True
            ):
                metrics.update(results)
    return metrics


def summary_line(cfg: DictConfig, metrics: dict[str, float], output_dir: Path, seconds: float) -> str:
    """One line with the overall test metrics (per-group ones and their uncertainty are in metrics.json),
    where the run's files are and its wall time."""
    overall = {k: v for k, v in metrics.items() if k.startswith("test/") and k.count("/") == 1}
    headline = {k: v for k, v in overall.items() if not is_uncertainty_key(k)}
    body = " ".join(f"{k}={v:.4f}" if k != "test/count" else f"{k}={int(v)}" for k, v in headline.items())
    name = f"{cfg.get('task_name')}/{cfg.get('model_label')}"
    return f"{SUMMARY_PREFIX} {name} {body} ({output_dir}, {duration(seconds)})"


def duration(seconds: float) -> str:
    """'4 min 12 s', or '52 s' under a minute."""
    minutes, seconds = divmod(round(seconds), 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"


def _finish_wandb(loggers: list) -> None:
    """Close the W&B run so the next job of a multirun starts its own run."""
    if any(type(lg).__name__ == "WandbLogger" for lg in loggers):
        import wandb

        wandb.finish()
