"""Per-example metric states that stay exact under DDP.

Lightning's distributed sampler pads an evaluation set by repeating examples so that every rank gets the same
number of batches. Metrics therefore keep each example's dataset index and, after the ranks' states are
gathered, count every index exactly once (and `pragexp.metrics.uncertainty.with_uncertainty` gives each mean
its uncertainty from those examples' scores).
"""

from __future__ import annotations

import torch
from torchmetrics.utilities import dim_zero_cat


def gathered(state, dtype: torch.dtype = torch.float) -> torch.Tensor:
    """A list state as one tensor (already one tensor after a DDP sync); empty when nothing came."""
    if isinstance(state, torch.Tensor) or len(state):
        return dim_zero_cat(state)
    return torch.empty(0, dtype=dtype)


def first_per_index(indices: torch.Tensor, *columns: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The examples sorted by dataset index, each index once: (indices, *columns)."""
    if indices.numel() == 0:
        return (indices, *columns)
    order = torch.argsort(indices, stable=True)
    indices = indices[order]
    first = torch.ones_like(indices, dtype=torch.bool)
    first[1:] = indices[1:] != indices[:-1]
    return (indices[first], *(c[order][first] for c in columns))
