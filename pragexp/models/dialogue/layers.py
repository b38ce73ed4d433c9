"""Pieces shared by the dialogue readers: an LSTM sentence encoder and the fusion MLP."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD_ID = 0


class SentenceEncoder(nn.Module):
    """A (bi)LSTM over padded token ids (..., L), run on packed sequences so padding never
    changes a result. `forward` gives one vector per sentence (the final hidden states of both
    directions, concatenated): (..., output_dim); `encode` also gives each token's state:
    (..., L, output_dim). Empty sentences (padding rounds) encode to zeros."""

    def __init__(
        self, embedding: nn.Embedding, hidden_dim: int, bidirectional: bool = True, dropout: float = 0.0
    ):
        super().__init__()
        self.embedding = embedding
        self.lstm = nn.LSTM(
            embedding.embedding_dim, hidden_dim, batch_first=True, bidirectional=bidirectional
        )
        self.dropout = nn.Dropout(dropout)
        self.output_dim = hidden_dim * (2 if bidirectional else 1)

    def _run(self, tokens: torch.Tensor, want_tokens: bool):
        lead_shape, length = tokens.shape[:-1], tokens.shape[-1]
        flat = tokens.reshape(-1, length)
        lengths = flat.ne(PAD_ID).sum(-1)
        dtype = self.embedding.weight.dtype
        sentences = flat.new_zeros((flat.shape[0], self.output_dim), dtype=dtype)
        states = (
            flat.new_zeros((flat.shape[0], length, self.output_dim), dtype=dtype) if want_tokens else None
        )
        nonempty = lengths.nonzero(as_tuple=True)[0]
        if nonempty.numel():
            embedded = self.dropout(self.embedding(flat[nonempty]))
            packed = pack_padded_sequence(
                embedded, lengths[nonempty].cpu(), batch_first=True, enforce_sorted=False
            )
            outputs, (hidden, _) = self.lstm(packed)
            sentences[nonempty] = torch.cat(list(hidden), dim=-1)
            if want_tokens:
                states[nonempty] = pad_packed_sequence(outputs, batch_first=True, total_length=length)[0]
        return sentences.reshape(*lead_shape, -1), (
            states.reshape(*lead_shape, length, -1) if want_tokens else None
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self._run(tokens, want_tokens=False)[0]

    def encode(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sentence vectors and token states in one pass."""
        return self._run(tokens, want_tokens=True)


def mlp(in_dim: int, hidden_dim: int, out_dim: int, dropout: float = 0.0) -> nn.Sequential:
    """The two-layer fusion network used on top of every reader."""
    return nn.Sequential(
        nn.Linear(in_dim, hidden_dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden_dim, out_dim)
    )


def recency_index(present: torch.Tensor, max_index: int) -> torch.Tensor:
    """present (B, R) rounds -> (B, R) positions counted back from the most recent round (1 = the
    last present round), clamped to max_index; the same whatever padding follows."""
    return present.long().flip(1).cumsum(1).flip(1).clamp(max=max_index)
