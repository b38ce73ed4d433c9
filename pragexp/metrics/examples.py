"""Per-example metric states that stay exact under DDP.

Lightning's distributed sampler pads an evaluation set by repeating examples so that every rank
gets the same number of batches. Metrics therefore keep each example's dataset index and, after
the ranks' states are gathered, count every index exactly once; from those examples' scores each mean gets its
uncertainty (`with_uncertainty`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics.utilities import dim_zero_cat

from pragexp.metrics.uncertainty import uncertainty_figures


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


def with_uncertainty(
    name: str,
    scores: torch.Tensor,
    clusters: torch.Tensor,
    groups: torch.Tensor | None = None,
    group_names: Sequence[str] = (),
) -> dict[str, torch.Tensor]:
    """The uncertainty figures of a mean (`pragexp.metrics.uncertainty.uncertainty_figures`) from its examples'
    scores, the ids of the items they score and their group ids (an index into `group_names`; -1: none)."""
    ids = groups.tolist() if groups is not None else [-1] * len(scores)
    labels = [group_names[g] if 0 <= g < len(group_names) else None for g in ids]
    figures = uncertainty_figures(name, scores.double().cpu().numpy(), clusters.tolist(), labels)
    return {key: torch.tensor(value) for key, value in figures.items()}
