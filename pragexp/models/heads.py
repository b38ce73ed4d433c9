"""Task-shaped heads around a dialogue reader.

A reader maps (history, query) to a state vector and can encode a single text; see
`pragexp.models.lstm.LSTMReader` for the contract (`output_dim`, `forward`, `encode_text`).
"""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.encoders import mlp


class CandidateRanker(nn.Module):
    """Scores K candidate sentences against the reader's state: (B, K) logits."""

    def __init__(self, reader: nn.Module, hidden_dim: int = 128, dropout: float = 0.0):
        super().__init__()
        self.reader = reader
        dim = reader.output_dim
        self.score = mlp(3 * dim, hidden_dim, 1, dropout)

    def forward(self, history: torch.Tensor, query: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        state = self.reader(history, query)  # (B, D)
        cands = self.reader.encode_text(candidates)  # (B, K, D)
        state = state.unsqueeze(1).expand_as(cands)
        return self.score(torch.cat([state, cands, state * cands], dim=-1)).squeeze(-1)


class AnswerClassifier(nn.Module):
    """Classifies the reader's state over a fixed answer vocabulary: (B, num_answers) logits."""

    def __init__(self, reader: nn.Module, num_answers: int, dropout: float = 0.0):
        super().__init__()
        self.reader = reader
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(reader.output_dim, num_answers)

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.out(self.dropout(self.reader(history, query)))
