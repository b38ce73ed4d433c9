"""Generation's fixed shapes (`llm=hf`): a prompt's reply depends on the prompt, the model and the settings,
never on the prompts batched with it, their number or their order.

Float rounding follows a pass's shapes (padding and the number of rows change a logit by ~1e-5 in float32,
enough to flip a greedy token between two near-ties), so, as in scoring (`scoring.passes`), every shape is a
function of the prompt alone:

- a prompt is left-padded to its width (`width`: at least `MIN_WIDTH`, four steps an octave above it, so a
  pad is at most a quarter of the width, and few widths share a call's prompts), with at least one pad (a
  batch without pads would have a mask of ones, which transformers may drop, changing the attention kernel);
- a batch holds prompts of one width only and always `rows` rows (`llm.batch_size`), the last batch of a
  width filled with repeats of its first prompt, whose replies are dropped.

Every row then runs through the same matrix shapes step after step (all rows of a batch start at one width
and grow by one token a step), and a row of a matrix product of a given shape is computed the same way
whatever the other rows hold; attention and sampling (`sampling.RowSampler`) are per row. A row that ends
early is fed padding by transformers' loop while the others go on, which changes none of its own tokens.
"""

from __future__ import annotations

import torch

from pragexp.generation.scoring.passes import filled

# The recipe of generated replies (part of their cache key): v1 pads prompts to `width` and batches
# `llm.batch_size` rows always.
GENERATION = "fixed-rows/v1"
MIN_WIDTH = 32


def width(tokens: int) -> int:
    """The padded length of a prompt of `tokens` tokens: at least one pad; MIN_WIDTH, or a multiple of a
    quarter of the octave it falls in (40, 48, 56, 64, 80, ..., 768, 896, 1024, 1280, ...). Fewer widths than
    a fixed step gives fewer short batches to fill (a call's prompts spread over 300-1,500 tokens take 10
    widths, not 38 of 32 tokens), at the price of up to a quarter of pads."""
    need = tokens + 1
    if need <= MIN_WIDTH:
        return MIN_WIDTH
    step = 1 << (need.bit_length() - 3)
    return step * -(-need // step)


def layout(lengths: list[int], rows: int) -> list[tuple[int, list[int], int]]:
    """[(width, prompt indices, real ones)]: the prompts (by their token counts) in batches of `rows`, one
    width a batch, short widths first; a short batch ends with repeats of its first prompt."""
    groups: dict[int, list[int]] = {}
    for i in sorted(range(len(lengths)), key=lambda i: (width(lengths[i]), i)):
        groups.setdefault(width(lengths[i]), []).append(i)
    return [(w, chunk, real) for w, members in groups.items() for chunk, real in filled(members, rows)]


def left_padded(rows: list[list[int]], to: int, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention mask), each (len(rows), to): the rows' tokens at the right end, pads before them."""
    ids = torch.full((len(rows), to), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), to), dtype=torch.long)
    for r, row in enumerate(rows):
        if row:
            ids[r, to - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[r, to - len(row) :] = 1
    return ids, mask
