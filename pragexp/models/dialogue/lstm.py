"""Dual-LSTM reader (GRICE section 5.1): one LSTM reads the whole history, one the query; an MLP fuses
them."""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import PAD_ID, SentenceEncoder, mlp
from pragexp.models.traits import PragexpModel


def flatten_rounds(history: torch.Tensor) -> torch.Tensor:
    """(B, R, L) padded rounds -> (B, R*L) with each dialogue's tokens moved to the front, in order."""
    flat = history.reshape(history.shape[0], -1)
    order = flat.eq(PAD_ID).to(torch.int8).argsort(dim=1, stable=True)
    return flat.gather(1, order)


class LSTMReader(PragexpModel):
    """A `DialogueReader` (pragexp.models.dialogue.protocol): the rounds read as one token
    sequence by one LSTM, the query by another."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        dropout: float = 0.1,
    ):
        super().__init__()
        embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.context_encoder = SentenceEncoder(embedding, hidden_dim, dropout=dropout)
        self.query_encoder = SentenceEncoder(embedding, hidden_dim, dropout=dropout)
        enc = self.query_encoder.output_dim
        self.fuse = mlp(2 * enc, fusion_dim, enc, dropout)
        self.output_dim = enc

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.query_encoder.encode(tokens)

    def read(self, history: torch.Tensor, query: torch.Tensor):
        flat = flatten_rounds(history)
        context, context_states = self.context_encoder.encode(flat)
        query_vec, query_states = self.query_encoder.encode(query)
        state = self.fuse(torch.cat([context, query_vec], dim=-1))
        return state, torch.cat([context_states, query_states], 1), torch.cat([flat, query], 1).ne(PAD_ID)

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.read(history, query)[0]
