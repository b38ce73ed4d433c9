"""Word-by-word comparison of a candidate sentence with the dialogue.

Which entity "them" or "she" stands for, and whether the candidate names that entity, is hard to
read off two sentence vectors. Each candidate token attends over the dialogue's token states,
is compared with what it attended to, and the comparisons are pooled (in the manner of ESIM,
Chen et al. 2017).
"""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import mlp


class TokenAligner(nn.Module):
    def __init__(self, dim: int, hidden_dim: int = 128, dropout: float = 0.0):
        super().__init__()
        self.compare = mlp(4 * dim, hidden_dim, hidden_dim, dropout)
        self.output_dim = 2 * hidden_dim

    def forward(
        self,
        candidate: torch.Tensor,
        candidate_mask: torch.Tensor,
        context: torch.Tensor,
        context_mask: torch.Tensor,
    ) -> torch.Tensor:
        """candidate (B, K, L, D) with mask (B, K, L); context (B, T, D) with mask (B, T) -> (B, K,
        output_dim)."""
        context, context_mask = real_tokens_first(context, context_mask)
        attention = torch.einsum("bkld,btd->bklt", candidate, context)
        attention = attention.masked_fill(~context_mask[:, None, None, :], torch.finfo(attention.dtype).min)
        aligned = torch.einsum("bklt,btd->bkld", attention.softmax(-1), context)
        # The comparison network runs on the candidates' words only (about half the padded positions);
        # padding stays zero, and both poolings leave it out.
        word, near = candidate[candidate_mask], aligned[candidate_mask]
        compared = candidate.new_zeros((*candidate_mask.shape, self.compare[-1].out_features))
        compared[candidate_mask] = self.compare(torch.cat([word, near, word * near, word - near], dim=-1))
        mask = candidate_mask.unsqueeze(-1)
        pooled_max = compared.masked_fill(~mask, torch.finfo(compared.dtype).min).amax(dim=2)
        pooled_mean = (compared * mask).sum(2) / mask.sum(2).clamp(min=1)
        # Empty candidates (none in real data) would pool to -inf: zero them.
        pooled_max = torch.where(mask.any(2), pooled_max, torch.zeros_like(pooled_max))
        return torch.cat([pooled_max, pooled_mean], dim=-1)


def real_tokens_first(states: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """states (B, T, D) with mask (B, T) -> the same tokens, each row's real ones first (in order), cut
    to the longest row's count. The dialogue's context is its rounds padded one by one to the longest
    round: about two thirds padding, which attention would otherwise score."""
    keep = max(int(mask.sum(1).max()), 1)
    order = mask.to(torch.uint8).argsort(dim=1, descending=True, stable=True)[:, :keep]
    return states.gather(1, order.unsqueeze(-1).expand(-1, -1, states.shape[-1])), mask.gather(1, order)
