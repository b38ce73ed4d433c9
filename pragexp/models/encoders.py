"""Pieces shared by the dialogue readers: token embeddings and an LSTM sentence encoder."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

PAD_ID = 0


class SentenceEncoder(nn.Module):
    """Encodes padded token ids (..., L) into one vector per sentence (..., output_dim).

    A (bi)LSTM over packed sequences, so padding never changes a sentence's vector;
    the final hidden states of both directions are concatenated.
    """

    def __init__(self, embedding: nn.Embedding, hidden_dim: int, bidirectional: bool = True, dropout: float = 0.0):
        super().__init__()
        self.embedding = embedding
        self.lstm = nn.LSTM(embedding.embedding_dim, hidden_dim, batch_first=True, bidirectional=bidirectional)
        self.dropout = nn.Dropout(dropout)
        self.output_dim = hidden_dim * (2 if bidirectional else 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        lead_shape, length = tokens.shape[:-1], tokens.shape[-1]
        flat = tokens.reshape(-1, length)
        lengths = flat.ne(PAD_ID).sum(-1)
        out = flat.new_zeros((flat.shape[0], self.output_dim), dtype=self.embedding.weight.dtype)
        nonempty = lengths.nonzero(as_tuple=True)[0]
        if nonempty.numel():
            # Empty sentences (padding rounds/candidates) are skipped and encode to zeros.
            embedded = self.dropout(self.embedding(flat[nonempty]))
            packed = pack_padded_sequence(embedded, lengths[nonempty].cpu(), batch_first=True, enforce_sorted=False)
            _, (hidden, _) = self.lstm(packed)
            out[nonempty] = torch.cat(list(hidden), dim=-1)
        return out.reshape(*lead_shape, self.output_dim)


def mlp(in_dim: int, hidden_dim: int, out_dim: int, dropout: float = 0.0) -> nn.Sequential:
    """The two-layer fusion network used on top of every reader."""
    return nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden_dim, out_dim))
