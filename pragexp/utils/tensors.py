"""Small tensor helpers that several rooms share (padding, pooling, encoding a batch of texts)."""

from __future__ import annotations

import torch


def pad_right(
    rows: list[list[int]], pad_id: int, width: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Token-id lists as one right-padded (n, width) tensor (`width`: the longest row's by default) and its
    mask (1 for a real token)."""
    width = max(len(r) for r in rows) if width is None else width
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of the hidden states over the real tokens: (b, t, d), (b, t) -> (b, d)."""
    mask = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of the hidden states over the real tokens, L2-normalised: (b, t, d), (b, t) -> (b, d)."""
    return torch.nn.functional.normalize(masked_mean(hidden, mask).float(), dim=-1)


def encode_batch(tokenizer, firsts, seconds=None) -> dict[str, torch.Tensor]:
    """Encoder inputs for texts (or text pairs) from a `tokenizers.Tokenizer` configured to pad and truncate:
    `input_ids`, `attention_mask` and `token_type_ids`, each (N, longest length in the batch)."""
    inputs = list(firsts) if seconds is None else list(zip(firsts, seconds, strict=True))
    encodings = tokenizer.encode_batch(inputs)
    return {
        "input_ids": torch.tensor([e.ids for e in encodings], dtype=torch.long),
        "attention_mask": torch.tensor([e.attention_mask for e in encodings], dtype=torch.long),
        "token_type_ids": torch.tensor([e.type_ids for e in encodings], dtype=torch.long),
    }
