"""The composed config as a rich tree, printed once at the start of a run (rank 0)."""

from __future__ import annotations

from omegaconf import DictConfig, OmegaConf
from pytorch_lightning.utilities import rank_zero_only
from rich.console import Console
from rich.syntax import Syntax
from rich.tree import Tree

from pragexp.entry.instantiate import public_config

# The groups a reader looks for first; the rest follow in config order.
FIRST = ("task", "data", "model", "optimizer", "scheduler", "trainer")


def config_tree(cfg: DictConfig) -> Tree:
    """One branch per top-level key, credentials masked (what the W&B run also gets)."""
    public = public_config(cfg)
    tree = Tree("config", guide_style="dim")
    order = [k for k in FIRST if k in public] + [k for k in public if k not in FIRST]
    for key in order:
        value = public[key]
        branch = tree.add(f"[bold]{key}[/bold]")
        text = OmegaConf.to_yaml(value) if isinstance(value, (dict, list)) else f"{value}\n"
        branch.add(Syntax(text.rstrip("\n"), "yaml", theme="ansi_dark", background_color="default"))
    return tree


@rank_zero_only
def print_config_tree(cfg: DictConfig) -> None:
    Console(soft_wrap=True).print(config_tree(cfg))
