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

from pragexp.models.encoders import PAD_ID, SentenceEncoder, mlp, recency_index


class RelNetReader(nn.Module):
    """Reader with the contract of `pragexp.models.lstm.LSTMReader`."""

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
        super().__init__()
        embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.round_encoder = SentenceEncoder(embedding, hidden_dim, dropout=dropout)
        dim = self.round_encoder.output_dim
        self.time = nn.Embedding(max_rounds + 1, dim)  # 0: the query; k: said k rounds ago
        self.g_left, self.g_right = nn.Linear(dim, relation_dim), nn.Linear(dim, relation_dim, bias=False)
        self.g_query = nn.Linear(dim, relation_dim, bias=False)
        self.g_rest = nn.Sequential(nn.ReLU(), nn.Linear(relation_dim, relation_dim), nn.ReLU())
        self.f = mlp(relation_dim + dim, fusion_dim, dim, dropout)
        self.output_dim = dim

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.round_encoder.encode(tokens)

    def read(self, history: torch.Tensor, query: torch.Tensor):
        sentences, sentence_states = self.round_encoder.encode(history)
        query_vec, query_states = self.round_encoder.encode(query)
        present = history.ne(PAD_ID).any(-1)
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
        state = self.f(torch.cat([relations.sum((1, 2)), query_vec], dim=-1))
        batch = history.shape[0]
        context = torch.cat([sentence_states.reshape(batch, -1, self.output_dim), query_states], dim=1)
        context_mask = torch.cat([history.reshape(batch, -1), query], dim=1).ne(PAD_ID)
        return state, context, context_mask

    def forward(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.read(history, query)[0]
