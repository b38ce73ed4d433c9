"""Building loggers and callbacks from their config groups."""

from __future__ import annotations

import re
from pathlib import Path

from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf

from pragexp.runs.settings import LAUNCH_OVERRIDES

SECRET_WORDS = ("key", "token", "secret", "password")


URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def _secret(name: str) -> bool:
    """A key whose value may be a credential. `*_env` keys hold the NAME of an environment variable
    (`api_key_env: OPENAI_API_KEY`), which is safe to show and tells the reader where the key comes from."""
    name = name.lower()
    return not name.endswith("_env") and any(w in name for w in SECRET_WORDS)


# Launch overrides (a sweep, a cluster) and those that say where or how a job runs: left out of W&B run names.
NOT_IN_RUN_NAME = (*LAUNCH_OVERRIDES, "logger", "paths.", "print_config=", "callbacks.")


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


def hydra_run_name() -> str | None:
    """The job's own overrides (a sweep's parameters included), as a W&B run name:
    `model=lstm,optimizer.lr=0.001`. None outside Hydra or when there are none (W&B then picks one)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    overrides = [
        o.lstrip("+~")
        for o in HydraConfig.get().overrides.task
        if not o.lstrip("+~").startswith(NOT_IN_RUN_NAME)
    ]
    return ",".join(overrides) or None


def build_loggers(logger_cfg: DictConfig | None) -> list:
    loggers = []
    for name, conf in (logger_cfg or {}).items():
        if conf is None:
            continue
        if "wandb" in name:  # unless the config names them: one group per sweep, the job's overrides as name
            defaults = {"group": hydra_sweep_group(), "name": hydra_run_name()}
            conf = OmegaConf.merge(conf, {k: v for k, v in defaults.items() if conf.get(k) is None})
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
            return {k: ("***" if _secret(str(k)) else scrub(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [scrub(v) for v in node]
        if isinstance(node, str):
            return URL_PASSWORD.sub(
                r"\1***@", node
            )  # a storage URL's password (mysql+pymysql://user:pw@host)
        return node

    job_keys = [k for k in cfg if k != "hydra"]  # Hydra's own node is not part of the experiment
    return scrub(
        OmegaConf.to_container(OmegaConf.masked_copy(cfg, job_keys), resolve=True, throw_on_missing=False)
    )
