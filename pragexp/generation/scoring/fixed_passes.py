"""Which forward passes score a call's contexts (`scorer.score_choices`), laid out so that each context's numbers
depend on the context alone: not on the other contexts of the call, their order, the response cache (it asks only
for what it lacks) or a batch-size setting (issue 27). Float rounding follows a pass's shapes (in bfloat16 up to
0.35 in a log-likelihood), so every shape here is a function of the context alone:

- a context is (its token ids, its head: how many of its leading tokens its prompt shares with the prompt's other
  items, `EncodedRequest.head`). The head runs once per distinct head (batch of one) and its KV cache serves
  every row on it;
- the rest of the context (its own part, at least its last token) is padded to its width, a multiple of `BUCKET`
  tokens: on the left after a head, so that every row's last token, whose logits score the options' first token,
  is the pass's last position; on the right without one (a left pad would attend to nothing), with at least one
  pad (transformers may drop a mask of ones, and with it change the attention kernel, where no row has a pad
  and queries and keys are as many), the logits kept at the `BUCKET` positions where such a row may end;
- a pass holds rows of one (head, width), as many as `PASS_TOKENS` make at that width (at least one), a short
  pass filled with repeats of its first row, whose results are dropped. A forward pass costs a fixed part (the
  weights read once) and a part per token (most of it on a CPU), and a call's rows of a width are often few: a
  pass of short rows holds many, a pass of long rows (demonstrations drawn for each item) one, so that the
  dummies never cost more than `PASS_TOKENS` tokens per width.

The rest of a longer option (its tokens after the first) runs the same way on a copy of its item's cache: padded
as an own part, rows of one width in passes that `rows_for` and `filled` lay out (`scorer._options_fixed`, gathered over the item passes of one head and width).

Fixed shapes, not the batch-size invariance of a BLAS (which GPUs do not promise), make a row's numbers the same
whatever shares its pass: a row of a matrix product of a given shape is computed the same way whatever the other
rows hold, and attention is per row.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch

PASS_TOKENS = 128  # a pass's rows x width, at least one row
BUCKET = 8  # own parts are padded to a multiple of this many tokens
Context = tuple[tuple[int, ...], int]  # (token ids, head length in tokens)


@dataclass(frozen=True)
class Pass:
    head: tuple[int, ...]  # the token ids every row starts with
    width: int  # the own parts' padded length
    rows: tuple[Context, ...]  # `rows_for(width)` contexts: the real ones, then repeats of the first
    real: int  # how many rows are real


def bucket(own_tokens: int, headless: bool = False) -> int:
    """The padded length of an own part of `own_tokens` tokens; at least one pad where the context has no head
    (only there would a pass without pads have a mask of ones: its queries as many as its keys)."""
    return BUCKET * ((own_tokens + headless + BUCKET - 1) // BUCKET)


def rows_for(width: int) -> int:
    """How many rows a pass of this width holds."""
    return max(1, PASS_TOKENS // width)


def filled(rows: list, size: int) -> list[tuple[list, int]]:
    """`rows` in passes of `size`, the last one filled with repeats of its first row: [(pass rows, real ones)]."""
    passes = []
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        passes.append((chunk + chunk[:1] * (size - len(chunk)), len(chunk)))
    return passes


def to_the_left(rows: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Right-padded rows (the first `lengths` entries of each real) as left-padded ones."""
    width = rows.shape[1]
    return torch.stack([row.roll(int(width - n)) for row, n in zip(rows, lengths, strict=True)])


def last_positions(width: int) -> torch.Tensor:
    """The positions where a headless own part right-padded to `width` (`bucket`: at least one pad) may end."""
    return torch.arange(max(0, width - BUCKET - 1), width - 1)


def plan(contexts) -> list[tuple[tuple[int, ...], list[Pass]]]:
    """[(head, [its passes])] for the distinct `contexts` (an iterable of `Context`), in an order that depends on
    the set only."""
    groups: dict[tuple[tuple[int, ...], int], list[Context]] = {}
    for ids, head in sorted(set(contexts)):
        if not 0 <= head < len(ids):
            raise ValueError(f"a context of {len(ids)} tokens cannot have a head of {head}")
        groups.setdefault((ids[:head], bucket(len(ids) - head, not head)), []).append((ids, head))
    passes = [
        Pass(head, width, tuple(chunk), real)
        for (head, width), rows in sorted(groups.items())
        for chunk, real in filled(rows, rows_for(width))
    ]
    return [(head, list(group)) for head, group in itertools.groupby(passes, key=lambda p: p.head)]
