"""run(cfg): build the data module, task, loggers and trainer from a composed config, then train,
validate the best checkpoint and test it. Returns the metrics and writes `metrics.json`."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytorch_lightning as pl
import torch
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from pragexp.utils.instantiate import build_callbacks, build_loggers, public_config
from pragexp.utils.io import atomic_write_text

log = logging.getLogger(__name__)
# conf/ sits beside the package (editable install); an absolute path works however main() is called.
CONFIG_DIR = Path(__file__).resolve().parent.parent / "conf"
SUMMARY_PREFIX = "pragexp:"


def read_checkpoint_extras(ckpt_path: str | None) -> dict | None:
    """What a pragexp checkpoint carries besides weights: the model config and the data module's
    state (vocabularies). Named checkpoints ('last', 'best') are resolved by Lightning instead."""
    if not ckpt_path or ckpt_path in ("last", "best", "hpc", "registry"):
        return None
    path = Path(ckpt_path)
    if not path.is_file():
        raise FileNotFoundError(f"ckpt_path not found: {path}")
    checkpoint = torch.load(path, map_location="cpu", weights_only=False)
    extras = checkpoint.get("pragexp", {})
    extras["datamodule_states"] = {k: v for k, v in checkpoint.items() if k.endswith("DataModule")}
    return extras


def check_model_fits_task(cfg: DictConfig) -> None:
    supported = cfg.get("supported_models")
    if supported and cfg.get("model_name") not in supported:
        raise ValueError(
            f"model={cfg.model_name} does not fit task={cfg.task_name}; choose one of: {', '.join(supported)}"
        )


def run(cfg: DictConfig) -> dict[str, float]:
    check_model_fits_task(cfg)
    if OmegaConf.is_missing(cfg, "ckpt_path") or (not cfg.get("train", True) and not cfg.get("ckpt_path")):
        raise ValueError("evaluation needs a trained model: pass ckpt_path=<path to a .ckpt file>")
    if cfg.get("seed") is not None:
        pl.seed_everything(int(cfg.seed), workers=True)  # honoured when 0
    extras = read_checkpoint_extras(cfg.get("ckpt_path"))

    datamodule = instantiate(cfg.data)
    model_cfg = cfg.model
    if extras:
        state = extras["datamodule_states"].get(type(datamodule).__qualname__)
        if state:
            datamodule.load_state_dict(state)
        if extras.get("model"):  # the weights decide the architecture
            model_cfg = OmegaConf.create(extras["model"])
            if model_cfg.get("_target_") != cfg.model.get("_target_"):
                log.warning(
                    "using the checkpoint's model %s, not %s",
                    model_cfg.get("_target_"),
                    cfg.model.get("_target_"),
                )

    task = instantiate(
        cfg.task,
        model=instantiate(model_cfg),
        optimizer=instantiate(cfg.optimizer),
        scheduler=instantiate(cfg.scheduler) if cfg.get("scheduler") else None,
    )
    # Set after instantiate: Hydra would turn a dict holding `_target_` passed as an argument into an object.
    task.model_config = OmegaConf.to_container(model_cfg, resolve=True)
    loggers = build_loggers(cfg.get("logger"))
    callbacks = build_callbacks(cfg.get("callbacks"), has_logger=bool(loggers))
    trainer: pl.Trainer = instantiate(cfg.trainer, logger=loggers or False, callbacks=callbacks)
    for logger in loggers:
        logger.log_hyperparams(public_config(cfg))

    metrics: dict[str, float] = {}
    try:
        test_ckpt = cfg.get("ckpt_path")
        if cfg.get("train", True):
            trainer.fit(task, datamodule=datamodule, ckpt_path=cfg.get("ckpt_path"))
            best = trainer.checkpoint_callback.best_model_path if trainer.checkpoint_callback else ""
            test_ckpt = best or None  # no checkpoint under fast_dev_run: use the weights in memory
            for results in trainer.validate(task, datamodule=datamodule, ckpt_path=test_ckpt, verbose=False):
                metrics.update(results)
        if cfg.get("test", True):
            for results in trainer.test(task, datamodule=datamodule, ckpt_path=test_ckpt, verbose=False):
                metrics.update(results)
    finally:
        _finish_wandb(loggers)

    metrics = {k: float(v) for k, v in sorted(metrics.items())}
    if trainer.is_global_zero:
        output_dir = Path(cfg.paths.output_dir)
        atomic_write_text(output_dir / "metrics.json", json.dumps(metrics, indent=2) + "\n")
        print(summary_line(cfg, metrics, output_dir), flush=True)
    return metrics


def summary_line(cfg: DictConfig, metrics: dict[str, float], output_dir: Path) -> str:
    """One line with the overall test metrics (per-group ones are in metrics.json)."""
    headline = {k: v for k, v in metrics.items() if k.startswith("test/") and k.count("/") == 1}
    body = " ".join(f"{k}={v:.4f}" if k != "test/count" else f"{k}={int(v)}" for k, v in headline.items())
    return f"{SUMMARY_PREFIX} {cfg.get('task_name')}/{cfg.get('model_name')} {body} ({output_dir})"


def _finish_wandb(loggers: list) -> None:
    """Close the W&B run so the next job of a multirun starts its own run."""
    if any(type(lg).__name__ == "WandbLogger" for lg in loggers):
        import wandb

        wandb.finish()
