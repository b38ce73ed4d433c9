"""Recurrent Entity Network reader (Henaff et al. 2017) for GRICE (section 5.1).

Each round is encoded by the shared `SentenceEncoder`; a set of memory slots, each with its own
learned key, is updated round after round by a gated write:

    g_j = sigmoid(s . h_j + s . w_j),  h~_j = prelu(U h_j + V w_j + W s),
    h_j <- normalise(h_j + g_j * h~_j)

and the output module reads the slots with the query (attention p_j = softmax(q . h_j),
u = sum_j p_j h_j, y = prelu(q + H u)), fused with what it read by the shared MLP.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from pragexp.models.dialogue.layers import mlp
from pragexp.models.dialogue.round_reader import RoundReader


class EntNetReader(RoundReader):
    """Gated entity slots written round by round; the query reads the slots."""

    def __init__(
        self,
        vocab_size: int,
        embed_dim: int = 64,
        hidden_dim: int = 64,
        fusion_dim: int = 128,
        slots: int = 20,
        dropout: float = 0.1,
    ):
        super().__init__(vocab_size, embed_dim, hidden_dim, dropout)
        dim = self.output_dim
        self.keys = nn.Parameter(torch.randn(slots, dim) / dim**0.5)
        self.U = nn.Linear(dim, dim, bias=False)
        self.V = nn.Linear(dim, dim, bias=False)
        self.W = nn.Linear(dim, dim)
        self.write_activation = nn.PReLU()
        self.H = nn.Linear(dim, dim, bias=False)
        self.read_activation = nn.PReLU()
        self.fuse = mlp(2 * dim, fusion_dim, dim, dropout)

    def memories(self, sentences: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        """sentences (B, R, D), present (B, R) -> slots (B, N, D) after reading the rounds in order;
        absent (padding) rounds leave the memory as it is."""
        keys = self.keys.unsqueeze(0).expand(sentences.shape[0], -1, -1)
        memory, projected_keys = keys, self.V(keys)
        for t in range(sentences.shape[1]):
            s = sentences[:, t].unsqueeze(1)
            gate = torch.sigmoid((s * memory).sum(-1, keepdim=True) + (s * keys).sum(-1, keepdim=True))
            candidate = self.write_activation(self.U(memory) + projected_keys + self.W(s))
            updated = F.normalize(memory + gate * candidate, dim=-1)
            memory = torch.where(present[:, t, None, None], updated, memory)
        return memory

    def dialogue_state(
        self, rounds: torch.Tensor, present: torch.Tensor, query: torch.Tensor
    ) -> torch.Tensor:
        memory = self.memories(rounds, present)
        attention = torch.einsum("bnd,bd->bn", memory, query).softmax(-1)
        read = torch.einsum("bn,bnd->bd", attention, memory)
        out = self.read_activation(query + self.H(read))
        return self.fuse(torch.cat([out, read], dim=-1))
