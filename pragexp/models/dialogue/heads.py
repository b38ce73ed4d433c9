"""Task-shaped heads around a `DialogueReader` (pragexp.models.dialogue.protocol)."""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import PAD_ID, mlp
from pragexp.models.dialogue.matching import TokenAligner


class CandidateRanker(nn.Module):
    """Scores K candidate sentences against the dialogue: (B, K) logits.

    Each candidate is judged on its sentence vector against the reader's state, and word by
    word against the dialogue's tokens (`TokenAligner`)."""

    def __init__(self, reader: nn.Module, hidden_dim: int = 128, dropout: float = 0.0):
        super().__init__()
        self.reader = reader
        dim = reader.output_dim
        self.align = TokenAligner(dim, hidden_dim, dropout)
        self.score = mlp(3 * dim + self.align.output_dim, hidden_dim, 1, dropout)

    def forward(self, history: torch.Tensor, query: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        state, context, context_mask = self.reader.read(history, query)
        cand_vecs, cand_states = self.reader.encode_text(candidates)  # (B,K,D), (B,K,L,D)
        aligned = self.align(cand_states, candidates.ne(PAD_ID), context, context_mask)
        state = state.unsqueeze(1).expand_as(cand_vecs)
        return self.score(torch.cat([state, cand_vecs, state * cand_vecs, aligned], dim=-1)).squeeze(-1)


class AnswerClassifier(nn.Module):
    """Classifies the dialogue over a fixed answer vocabulary: (B, num_answers) logits.

    The reader's state alone leaves the answer to one vector; the question's words are also
    aligned word by word with the dialogue's (`TokenAligner`), so "was Mia in the den" can find
    the round that mentions Mia and the den. The query is the last part of the reader's token
    context (`round_reader.token_context`); it is masked out so it does not align with itself."""

    def __init__(self, reader: nn.Module, num_answers: int, hidden_dim: int = 128, dropout: float = 0.0):
        super().__init__()
        self.reader = reader
        dim = reader.output_dim
        self.align = TokenAligner(dim, hidden_dim, dropout)
        self.out = mlp(dim + self.align.output_dim, hidden_dim, num_answers, dropout)

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        state, context, context_mask = self.reader.read(history, query)
        length = query.shape[-1]
        dialogue_mask = context_mask.clone()
        dialogue_mask[:, -length:] = False
        aligned = self.align(
            context[:, None, -length:], query.ne(PAD_ID)[:, None], context, dialogue_mask
        ).squeeze(1)
        return self.out(torch.cat([state, aligned], dim=-1))
