"""Learning-rate schedules as Lightning `lr_scheduler` dicts.

Every factory takes the optimizer and the number of optimizer steps of the whole run, so the
task can call any of them the same way (`scheduler=` configs are `_partial_`).
"""

from __future__ import annotations

from torch.optim import Optimizer
from torch.optim.lr_scheduler import ReduceLROnPlateau


def plateau(
    optimizer: Optimizer,
    num_training_steps: int,
    monitor: str,
    mode: str = "max",
    factor: float = 0.5,
    patience: int = 2,
) -> dict:
    return {
        "scheduler": ReduceLROnPlateau(optimizer, mode=mode, factor=factor, patience=patience),
        "monitor": monitor,
        "interval": "epoch",
    }


def linear_warmup(optimizer: Optimizer, num_training_steps: int, warmup_ratio: float = 0.1) -> dict:
    """Linear warm-up over the first `warmup_ratio` of the steps, then linear decay to zero (BERT's
    schedule, as transformers implements it), stepped every optimizer step."""
    from transformers import get_linear_schedule_with_warmup

    warmup = int(num_training_steps * warmup_ratio)
    return {
        "scheduler": get_linear_schedule_with_warmup(optimizer, warmup, num_training_steps),
        "interval": "step",
    }
