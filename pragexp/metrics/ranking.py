"""Ranking of candidates: the 1-based rank of the gold candidate, R@k and reciprocal rank."""

from __future__ import annotations

import torch


def target_rank(scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """1-based rank of `target` among `scores` (B, K). Ties count against the gold: a model that
    scores every candidate the same gets rank K, not 1."""
    gold = scores.gather(1, target.unsqueeze(1))
    return (scores >= gold).sum(1)


def reciprocal_rank(scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return 1.0 / target_rank(scores, target).float()


def recall_at_k(scores: torch.Tensor, target: torch.Tensor, k: int) -> torch.Tensor:
    return (target_rank(scores, target) <= k).float()
