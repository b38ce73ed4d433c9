"""Passage retrieval recall, per question (PragmatiCQA's R@k and R^All@k, Qi et al. 2023, Table 4).

A question's gold passages are those holding one of its literal or pragmatic spans (canned answers such
as "Yes" aside: they come from no passage). With `retrieved` the passage ids ranked for the question:

- `r@k`       = 1 if any gold passage is among the top k, else 0;
- `r_all@k`   = the share of the question's gold passages that are among the top k: R^All@k, "the recall
  for the entire gold document collection at k passages" (Table 4's caption), averaged over questions;
- `hit_all@k` = 1 if every gold passage is among the top k, else 0 (ours, not the paper's: the share of
  questions whose whole evidence was retrieved, a stricter figure than R^All@k).

r_all@k <= r@k for every question, and hit_all@k <= r_all@k. A question with no gold passage in the corpus
(its spans are canned, or their keys are not in it) scores 0 on all three: the means are over all
questions, so R@k is the share of questions whose evidence was found.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

RECALL_NAMES = ("r", "r_all", "hit_all")


def recall_at_k(
    retrieved: Sequence[Sequence[int]], gold: Sequence[Sequence[int]], k: int
) -> dict[str, torch.Tensor]:
    """{"r", "r_all", "hit_all"} -> one float per question (see the module docstring)."""
    scores: dict[str, list[float]] = {name: [] for name in RECALL_NAMES}
    for ranked, wanted in zip(retrieved, gold, strict=True):
        wanted, top = set(wanted), {int(p) for p in list(ranked)[:k]}
        found = len(wanted & top)
        scores["r"].append(float(found > 0))
        scores["r_all"].append(found / len(wanted) if wanted else 0.0)
        scores["hit_all"].append(float(bool(wanted) and found == len(wanted)))
    return {name: torch.tensor(values) for name, values in scores.items()}
