"""End-to-end memory network reader (GRICE section 5.1).

Each round of the history is one memory slot, encoded by an LSTM; the query attends over the
slots for a few hops and an MLP fuses the query with what it read.
"""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.encoders import PAD_ID, SentenceEncoder, mlp, recency_index


class MemoryAttention(nn.Module):
    """Multi-hop attention from a query vector over memory slots, with a learned empty slot
    so that a dialogue's first round (no history) still has something to attend to."""

    def __init__(self, dim: int, hops: int = 2, max_slots: int = 32):
        super().__init__()
        self.hops = hops
        self.keys = nn.Linear(dim, dim)
        self.values = nn.Linear(dim, dim)
        self.time = nn.Embedding(max_slots + 1, dim)
        self.empty_slot = nn.Parameter(torch.zeros(1, 1, dim))
        self.hop = nn.Linear(dim, dim)

    def forward(self, slots: torch.Tensor, slot_mask: torch.Tensor, query: torch.Tensor):
        batch, num_slots, dim = slots.shape
        # Temporal encoding counts back from the most recent round, so "there"/"them" can find it.
        slots = slots + self.time(recency_index(slot_mask, self.time.num_embeddings - 1))
        slots = torch.cat([self.empty_slot.expand(batch, 1, dim), slots], dim=1)
        mask = torch.cat([slot_mask.new_ones(batch, 1), slot_mask], dim=1)
        keys, values = self.keys(slots), self.values(slots)
        read = torch.zeros_like(query)
        for _ in range(self.hops):
            scores = torch.einsum("bsd,bd->bs", keys, query).masked_fill(~mask, float("-inf"))
            read = torch.einsum("bs,bsd->bd", scores.softmax(-1), values)
            query = self.hop(query) + read
        return query, read


class MemNNReader(nn.Module):
    """Reader with the contract of `pragexp.models.lstm.LSTMReader`."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        hops: int = 2,
        dropout: float = 0.1,
    ):
        super().__init__()
        embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.round_encoder = SentenceEncoder(embedding, hidden_dim, dropout=dropout)
        dim = self.round_encoder.output_dim
        self.memory = MemoryAttention(dim, hops=hops)
        self.fuse = mlp(2 * dim, fusion_dim, dim, dropout)
        self.output_dim = dim

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.round_encoder.encode(tokens)

    def read(self, history: torch.Tensor, query: torch.Tensor):
        slots, slot_states = self.round_encoder.encode(history)
        query_vec, query_states = self.round_encoder.encode(query)
        state, read = self.memory(slots, history.ne(PAD_ID).any(-1), query_vec)
        batch = history.shape[0]
        context = torch.cat([slot_states.reshape(batch, -1, self.output_dim), query_states], dim=1)
        context_mask = torch.cat([history.reshape(batch, -1), query], dim=1).ne(PAD_ID)
        return self.fuse(torch.cat([state, read], dim=-1)), context, context_mask

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.read(history, query)[0]
