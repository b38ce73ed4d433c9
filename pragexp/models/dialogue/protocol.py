"""The contract every GRICE dialogue reader keeps (LSTM, MemNN, EntNet, RelNet, MemNN w/ inf).

Task heads (`heads.CandidateRanker`, `heads.AnswerClassifier`, `seq2seq.Seq2SeqRanker`) accept any
module with this shape, so a new reader only has to satisfy it. Shapes: B dialogues, R rounds,
L tokens per round or sentence, T tokens of context, D = `output_dim`. Token id 0 is padding.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class DialogueReader(Protocol):
    output_dim: int
    """Size of the dialogue state and of every token state."""

    def read(
        self, history: torch.Tensor, query: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """history (B, R, L), query (B, L) -> (state (B, D), context (B, T, D), context_mask (B, T)):
        the dialogue state, and the token states a candidate may be compared with word by word."""
        ...

    def encode_text(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (..., L) -> (sentence vectors (..., D), token states (..., L, D)), for candidates."""
        ...

    def __call__(self, history: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """The dialogue state alone: `read(history, query)[0]`."""
        ...
