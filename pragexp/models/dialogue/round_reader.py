"""Base of the readers that encode every round, the query and the candidates with one LSTM
sentence encoder (MemNN, EntNet, RelNet); each differs only in how it turns the round vectors
and the query into a dialogue state."""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import PAD_ID, SentenceEncoder
from pragexp.models.traits import PragexpModel


def token_context(history, history_states, query, query_states) -> tuple[torch.Tensor, torch.Tensor]:
    """The dialogue's token states (every round's, then the query's) and their mask: what a
    candidate is compared with word by word."""
    batch = history.shape[0]
    context = torch.cat([history_states.reshape(batch, -1, history_states.shape[-1]), query_states], dim=1)
    return context, torch.cat([history.reshape(batch, -1), query], dim=1).ne(PAD_ID)


class RoundReader(PragexpModel):
    """A `DialogueReader` (pragexp.models.dialogue.protocol). Subclasses implement
    `dialogue_state(rounds (B,R,D), present (B,R) bool, query (B,D)) -> (B, output_dim)`."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_dim: int, dropout: float):
        super().__init__()
        embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.round_encoder = SentenceEncoder(embedding, hidden_dim, dropout=dropout)
        self.output_dim = self.round_encoder.output_dim

    def dialogue_state(
        self, rounds: torch.Tensor, present: torch.Tensor, query: torch.Tensor
    ) -> torch.Tensor:
        raise NotImplementedError

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.round_encoder.encode(tokens)

    def read(self, history: torch.Tensor, query: torch.Tensor):
        rounds, round_states = self.round_encoder.encode(history)
        query_vec, query_states = self.round_encoder.encode(query)
        state = self.dialogue_state(rounds, history.ne(PAD_ID).any(-1), query_vec)
        return (state, *token_context(history, round_states, query, query_states))

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.read(history, query)[0]
