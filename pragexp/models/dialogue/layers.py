"""Pieces shared by the dialogue readers: an LSTM sentence encoder and the fusion MLP."""

from __future__ import annotations

import torch
from torch import nn

PAD_ID = 0


class SentenceEncoder(nn.Module):
    """A (bi)LSTM over padded token ids (..., L) whose results never depend on padding. `forward`
    gives one vector per sentence (the final hidden states of both directions, concatenated):
    (..., output_dim); `encode` also gives each token's state: (..., L, output_dim), zero at padding.
    Empty sentences (padding rounds) encode to zeros.

    Each direction runs over right-padded rows rather than a packed sequence: on CPU a packed LSTM
    steps through small per-time-step products (1.8x slower, forward and backward, on the main job's
    batches), while padded rows take the fused LSTM kernel. Padding after a sentence cannot reach its
    states in the left-to-right pass; the right-to-left pass reads each sentence reversed within its
    own length, so padding comes after it there too. The weights stay those of one bidirectional
    `nn.LSTM` (the checkpoint layout is unchanged)."""

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

    def _direction(self, embedded: torch.Tensor, suffix: str) -> torch.Tensor:
        """One direction's states (N, L, H) over right-padded rows, with that direction's weights
        (`suffix` "" or "_reverse"); the same kernel nn.LSTM calls."""
        weights = [
            getattr(self.lstm, f"{name}_l0{suffix}")
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        ]
        zeros = embedded.new_zeros(1, embedded.shape[0], self.lstm.hidden_size)
        outputs, _, _ = torch.lstm(
            embedded, (zeros, zeros), weights, True, 1, 0.0, self.training, False, True
        )
        return outputs

    def _states(self, rows: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """rows (N, L) of non-empty sentences -> (sentence vectors (N, D), token states (N, L, D))."""
        embedded = self.dropout(self.embedding(rows))
        positions = torch.arange(rows.shape[1], device=rows.device)
        inside = positions < lengths[:, None]
        last = (lengths - 1)[:, None, None]
        forward = self._direction(embedded, "")
        sentence = [forward.gather(1, last.expand(-1, 1, forward.shape[-1])).squeeze(1)]
        states = [forward]
        if self.lstm.bidirectional:
            # Position t <-> length-1-t inside each sentence; padding stays where it is. It is its own
            # inverse.
            mirror = torch.where(inside, lengths[:, None] - 1 - positions, positions).unsqueeze(-1)
            backward = self._direction(embedded.gather(1, mirror.expand_as(embedded)), "_reverse")
            backward = backward.gather(1, mirror.expand_as(backward))
            sentence.append(backward[:, 0])  # the right-to-left pass ends on the first word
            states.append(backward)
        return torch.cat(sentence, dim=-1), torch.cat(states, dim=-1) * inside.unsqueeze(-1)

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
            longest = int(lengths.max())  # columns past every sentence's end are padding only: skipped
            vectors, token_states = self._states(flat[nonempty, :longest], lengths[nonempty])
            sentences[nonempty] = vectors
            if want_tokens:
                states[nonempty, :longest] = token_states
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
