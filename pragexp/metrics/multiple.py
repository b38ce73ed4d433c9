"""Many comparisons in one table: p-values adjusted so that the chance of any false rejection among them (the
family-wise error rate) stays at the level, by Holm's step-down method (Holm 1979). It holds whatever the
dependence between the tests, and rejects everything Bonferroni's correction rejects, often more.

With m p-values sorted, p_(1) <= ... <= p_(m), the adjusted p_(i) is max over j <= i of min(1, (m - j + 1)
p_(j)): a comparison is rejected at level α where its adjusted p-value is at most α (R's `p.adjust(method =
"holm")`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

METHOD = "Holm's step-down (family-wise error rate)"


def holm(p_values: Sequence[float]) -> list[float]:
    """The Holm-adjusted p-values, in the order given."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.size == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (p.size - np.arange(p.size)) * p[order])
    adjusted = np.empty_like(p)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted.tolist()
