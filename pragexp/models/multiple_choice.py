"""Multiple choice with any sequence scorer (a BERT encoder with one output, say)."""

from __future__ import annotations

import torch
from torch import nn


class ChoiceScorer(nn.Module):
    """Multiple choice with a sequence scorer (BERT with one output): each of the C text pairs of an
    example, "[CLS] dialogue [SEP] candidate [SEP]", gets one score; (B, C, L) inputs -> (B, C) logits."""

    def __init__(self, scorer: nn.Module):
        super().__init__()
        self.scorer = scorer

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        batch, choices, length = input_ids.shape

        def flat(x: torch.Tensor | None) -> torch.Tensor | None:
            return None if x is None else x.reshape(batch * choices, length)

        scores = self.scorer(flat(input_ids), flat(attention_mask), flat(token_type_ids))
        return scores.view(batch, choices)
