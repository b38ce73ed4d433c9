"""End-to-end memory network reader (GRICE section 5.1).

Each round of the history is one memory slot, encoded by an LSTM; the query attends over the
slots for a few hops and an MLP fuses the query with what it read.
"""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import mlp, recency_index
from pragexp.models.dialogue.round_reader import RoundReader


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


class MemNNReader(RoundReader):
    """One memory slot per round; the query attends over the slots for a few hops."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        hops: int = 2,
        dropout: float = 0.1,
    ):
        super().__init__(vocab_size, embed_dim, hidden_dim, dropout)
        self.memory = MemoryAttention(self.output_dim, hops=hops)
        self.fuse = mlp(2 * self.output_dim, fusion_dim, self.output_dim, dropout)

    def dialogue_state(
        self, rounds: torch.Tensor, present: torch.Tensor, query: torch.Tensor
    ) -> torch.Tensor:
        state, read = self.memory(rounds, present, query)
        return self.fuse(torch.cat([state, read], dim=-1))
