"""A run's config and data module, built as `pragexp.run` builds them, for commands that use a run's pieces
without running one (`python -m pragexp.data.pragmaticqa build|info|search`): same overrides, same config,
same data module (hence the same caches)."""

from __future__ import annotations

from collections.abc import Sequence

from hydra.utils import instantiate
from omegaconf import DictConfig

from pragexp import CONFIG_DIR
from pragexp.runs.checkpoint import PragexpCheckpoint


def compose(config_name: str, overrides: Sequence[str]) -> DictConfig:
    """The config `python -m pragexp.<config_name> <overrides>` runs with. Hydra's own config is set as under
    the entry points, so that settings which read it (`${hydra:runtime.cwd}`) resolve."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.hydra_config import HydraConfig

    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base="1.3"):
        cfg = hydra_compose(config_name, overrides=list(overrides), return_hydra_config=True)
    HydraConfig.instance().set_config(cfg)
    return cfg


def build_datamodule(cfg: DictConfig, saved: PragexpCheckpoint | None = None):
    """`cfg.data` built; with a checkpoint, the state it saved of its data module (vocabularies, tokenizers)
    is loaded into it, so that its ids are the trained model's."""
    datamodule = instantiate(cfg.data)
    if saved is not None:
        state = saved.datamodule_state(type(datamodule).__qualname__)
        if state:
            datamodule.load_state_dict(state)
    return datamodule
