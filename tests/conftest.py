"""Shared test helpers: compose configs as the command line would, with tiny settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
SAMPLES = ROOT.parent / "shared" / "samples"

for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("WANDB_MODE", "offline")

# A dataset small enough to train on in seconds; every test that generates data shares its cache.
TINY_DATA = ["data.generate.train_dialogs=60", "data.generate.val_dialogs=20", "data.generate.test_dialogs=20"]
TINY_MODEL = ["model.embed_dim=16", "model.hidden_dim=16", "model.fusion_dim=32"]


def compose_config(overrides: list[str], output_dir: Path, config_name: str = "train") -> DictConfig:
    """The config `python -m pragexp.<config_name> <overrides>` would run, writing into output_dir."""
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name, overrides=overrides, return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    with open_dict(cfg):
        cfg.paths.output_dir = str(output_dir)
    return cfg


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def make_config(tmp_path, cache_dir):
    """make_config(overrides) -> a composed config with tiny data and model, outputs under tmp_path."""
    def make(overrides=(), name: str = "train", out: str = "run", tiny_model: bool = True) -> DictConfig:
        base = [f"paths.cache_dir={cache_dir}", "logger=none", "trainer.max_epochs=1",
                "trainer.accelerator=cpu", "callbacks.progress_bar=null"]
        groups = [o for o in overrides if "." not in o.split("=")[0]]
        model = TINY_MODEL if tiny_model else []
        generated = not any(o.startswith("data=") and o != "data=grice" for o in groups)
        data = TINY_DATA if generated else []
        return compose_config([*base, *groups, *data, *model, *[o for o in overrides if o not in groups]],
                              tmp_path / out, name)
    return make


def run_module(module: str, args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """Runs `python -m <module> <args>` as a user would, offline."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PRAGEXP_OUTPUTS": str(cwd / "outputs")}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
