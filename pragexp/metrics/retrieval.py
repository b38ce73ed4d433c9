"""Passage retrieval recall, per question (PragmatiCQA's R@k and R^All@k, Qi et al. 2023, Table 4).

A question's gold passages are those holding one of its literal or pragmatic spans (canned answers such
as "Yes" aside: they come from no passage). With `retrieved` the passage ids ranked for the question:

- `r@k`     = 1 if any gold passage is among the top k, else 0;
- `r_all@k` = 1 if every gold passage is among the top k, else 0.

A question with no gold passage in the corpus (its spans are canned, or their keys are not in it) scores
0 on both: the means are over all questions, so R@k is the share of questions whose evidence was found.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def recall_at_k(
    retrieved: Sequence[Sequence[int]], gold: Sequence[Sequence[int]], k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(r@k, r_all@k) per question, as float tensors."""
    any_hit, all_hit = [], []
    for ranked, wanted in zip(retrieved, gold, strict=True):
        wanted, top = set(wanted), {int(p) for p in list(ranked)[:k]}
        any_hit.append(float(bool(wanted & top)))
        all_hit.append(float(bool(wanted) and wanted <= top))
    return torch.tensor(any_hit), torch.tensor(all_hit)
