"""A model compared with people item by item, as Hu et al. (2023) compare them (their analysis/main.ipynb,
"By-item relationship with humans"): over the items of a phenomenon, Pearson's r between the model's
probability of the true answer on the item (the mean over the rows that score it: the option-order seeds) and
people's proportion correct on it, with its two-sided p-value (scipy.stats.pearsonr, as theirs) and the 95%
interval of r (Fisher's z).

`item_correlation` gives, beside the metric's `<name>` (r): `<name>_p`, `<name>_ci95_low`, `<name>_ci95_high`
and `<name>_items` (the items correlated, those people answered); under three items, or where either side is
the same on every item, there is no r and no key.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats


def item_correlation(name: str, p_true: torch.Tensor, people: torch.Tensor, items: torch.Tensor) -> dict:
    """`p_true` and `people` (people's proportion correct on the row's item; NaN: not answered) per row,
    `items` the item each row scores."""
    model_means, people_shares = _per_item(p_true, people, items)
    if len(model_means) < 3 or np.ptp(model_means) == 0 or np.ptp(people_shares) == 0:
        return {}
    result = stats.pearsonr(model_means, people_shares)
    low, high = result.confidence_interval(0.95)
    figures = {
        name: result.statistic,
        f"{name}_p": result.pvalue,
        f"{name}_ci95_low": low,
        f"{name}_ci95_high": high,
        f"{name}_items": len(model_means),
    }
    return {key: torch.tensor(float(value), dtype=torch.float64) for key, value in figures.items()}


def _per_item(
    p_true: torch.Tensor, people: torch.Tensor, items: torch.Tensor
) -> tuple[np.ndarray, np.ndarray]:
    """Per item that people answered, in item order: the mean of its rows' p_true and people's share."""
    answered = ~torch.isnan(people)
    ids = items[answered].long()
    if ids.numel() == 0:
        return np.zeros(0), np.zeros(0)
    unique, slot = torch.unique(ids, return_inverse=True)
    rows = torch.zeros(len(unique), dtype=torch.float64).index_add_(
        0, slot, torch.ones_like(slot, dtype=torch.float64)
    )
    model = (
        torch.zeros(len(unique), dtype=torch.float64).index_add_(0, slot, p_true[answered].double()) / rows
    )
    share = (
        torch.zeros(len(unique), dtype=torch.float64).index_add_(0, slot, people[answered].double()) / rows
    )
    return model.numpy(), share.numpy()
