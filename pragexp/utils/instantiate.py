"""Building loggers and callbacks from their config groups."""

from __future__ import annotations

from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

SECRET_WORDS = ("key", "token", "secret", "password")


def hydra_sweep_group() -> str | None:
    """In a Hydra multirun, a name for the whole sweep (its dir, from `multirun/` on); else None."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    if not HydraConfig.initialized():
        return None
    hydra_cfg = HydraConfig.get()
    if hydra_cfg.mode != RunMode.MULTIRUN:
        return None
    parts = Path(hydra_cfg.sweep.dir).parts
    return (
        "/".join(parts[parts.index("multirun") + 1 :])
        if "multirun" in parts
        else Path(hydra_cfg.sweep.dir).name
    )


def build_loggers(logger_cfg: DictConfig | None) -> list:
    loggers = []
    for name, conf in (logger_cfg or {}).items():
        if conf is None:
            continue
        if "wandb" in name and conf.get("group") is None:
            conf = OmegaConf.merge(conf, {"group": hydra_sweep_group()})
        loggers.append(instantiate(conf))
    return loggers


def build_callbacks(callbacks_cfg: DictConfig | None, has_logger: bool) -> list:
    callbacks = []
    for conf in (callbacks_cfg or {}).values():
        if conf is None:
            continue
        # LearningRateMonitor refuses to run without a logger (logger=none).
        if not has_logger and conf.get("_target_", "").endswith("LearningRateMonitor"):
            continue
        callbacks.append(instantiate(conf))
    return callbacks


def public_config(cfg: DictConfig) -> dict:
    """The resolved config as a dict, without anything that looks like a credential."""

    def scrub(node):
        if isinstance(node, dict):
            return {
                k: ("***" if any(w in str(k).lower() for w in SECRET_WORDS) else scrub(v))
                for k, v in node.items()
            }
        if isinstance(node, list):
            return [scrub(v) for v in node]
        return node

    job_keys = [k for k in cfg if k != "hydra"]  # Hydra's own node is not part of the experiment
    return scrub(
        OmegaConf.to_container(OmegaConf.masked_copy(cfg, job_keys), resolve=True, throw_on_missing=False)
    )
