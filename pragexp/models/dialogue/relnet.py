"""Relation Network reader (Santoro et al. 2017) for GRICE (section 5.1).

The objects are the rounds of the history (shared `SentenceEncoder`, plus an embedding of how many
rounds ago each was said) and the query itself. A relation MLP g reads every ordered pair of
objects together with the query; the relations are summed over the pairs and f (the shared fusion
MLP) turns the sum into the dialogue state. g's first layer is split into one linear map per
argument, so the pairs cost (objects^2 x hidden), never (objects^2 x 3 x dim).
"""

from __future__ import annotations

import torch
from torch import nn

from pragexp.models.dialogue.layers import mlp, recency_index
from pragexp.models.dialogue.round_reader import RoundReader


class RelNetReader(RoundReader):
    """g over every pair of rounds (and the query) with the query, summed, then f."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        relation_dim: int = 128,
        max_rounds: int = 32,
        dropout: float = 0.1,
    ):
        super().__init__(vocab_size, embed_dim, hidden_dim, dropout)
        dim = self.output_dim
        self.time = nn.Embedding(max_rounds + 1, dim)  # 0: the query; k: said k rounds ago
        self.g_left, self.g_right = nn.Linear(dim, relation_dim), nn.Linear(dim, relation_dim, bias=False)
        self.g_query = nn.Linear(dim, relation_dim, bias=False)
        self.g_rest = nn.Sequential(nn.ReLU(), nn.Linear(relation_dim, relation_dim), nn.ReLU())
        self.f = mlp(relation_dim + dim, fusion_dim, dim, dropout)

    def dialogue_state(
        self, sentences: torch.Tensor, present: torch.Tensor, query_vec: torch.Tensor
    ) -> torch.Tensor:
        recency = recency_index(present, self.time.num_embeddings - 1)
        objects = torch.cat([query_vec.unsqueeze(1), sentences], dim=1)
        objects = objects + self.time(torch.cat([recency.new_zeros(recency.shape[0], 1), recency], dim=1))
        mask = torch.cat([present.new_ones(present.shape[0], 1), present], dim=1)
        pairs = (
            self.g_left(objects).unsqueeze(2)
            + self.g_right(objects).unsqueeze(1)
            + self.g_query(query_vec)[:, None, None, :]
        )
        relations = self.g_rest(pairs) * (mask.unsqueeze(2) & mask.unsqueeze(1)).unsqueeze(-1)
        return self.f(torch.cat([relations.sum((1, 2)), query_vec], dim=-1))
