"""Learning-rate schedules as Lightning `lr_scheduler` dicts.

Every factory takes the optimizer and the number of optimizer steps of the whole run, so the
task can call any of them the same way (`scheduler=` configs are `_partial_`).
"""

from __future__ import annotations

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau


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


class _WarmupThenLinearDecay:
    def __init__(self, warmup_steps: int, total_steps: int):
        self.warmup_steps, self.total_steps = warmup_steps, max(total_steps, 1)

    def __call__(self, step: int) -> float:
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        return max(0.0, (self.total_steps - step) / max(1, self.total_steps - self.warmup_steps))


def linear_warmup(optimizer: Optimizer, num_training_steps: int, warmup_ratio: float = 0.1) -> dict:
    """Linear warm-up over the first `warmup_ratio` of the steps, then linear decay to zero (BERT's schedule)."""
    warmup = int(num_training_steps * warmup_ratio)
    return {
        "scheduler": LambdaLR(optimizer, _WarmupThenLinearDecay(warmup, num_training_steps)),
        "interval": "step",
    }
