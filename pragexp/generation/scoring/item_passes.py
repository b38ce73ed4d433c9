"""Steps 2 and 3 of the scorer (pragexp.generation.scoring.scorer) on the KV cache: a pass of items' own parts on a
shared prefix's cache (`run_items`), and options scored after them (`first_tokens`, and `rowwise_rest` for the
tokens after an option's first, a row each on a copy of its item's cache)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pragexp.generation.scoring import fixed_passes
from pragexp.generation.scoring.causal_lm import CausalLM
from pragexp.utils.tensors import pad_right


@dataclass
class ItemBatch:
    """Step 2's result for a batch of items: their caches and where each item's context ends."""

    keys: list[tuple]  # the items' context keys (their ids; in scoring, (ids, head))
    cache: list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values): (items, heads, length, dim)
    mask: torch.Tensor  # (items, length): 1 for a real context token
    ends: torch.Tensor  # (items,): each context's length (shared prefix included)
    last: torch.Tensor  # (items, vocab): log p(next token) after each context


def run_items(
    lm: CausalLM,
    keys: list[tuple],
    owns: list[list[int]],
    shared: int,
    prefix: list,
    width: int | None = None,
) -> ItemBatch:
    """Each item's own part of its context, on the shared prefix's cache expanded over the batch, padded to
    `width` (scoring's fixed shapes: `fixed_passes`) or else to the longest."""
    own, own_mask = pad_right(owns, lm.pad_id, width)
    lengths = own_mask.sum(1)
    positions = shared + torch.arange(own.shape[1]).expand(len(keys), -1)
    ends_at = lengths - 1  # each row's last position: it predicts the options' first token ...
    keep = torch.unique(ends_at)  # ... and only those positions' logits are needed
    if width is not None and shared:  # left-padded: every row ends at the last position
        own, own_mask = fixed_passes.to_the_left(own, lengths), fixed_passes.to_the_left(own_mask, lengths)
        positions = shared + (own_mask.cumsum(1) - 1).clamp(min=0)
        ends_at = torch.full_like(lengths, width - 1)
        keep = ends_at[:1]
    elif width is not None:  # right-padded (a left pad would attend to nothing): wherever a row may end
        keep = fixed_passes.last_positions(width)
    mask = torch.cat([torch.ones(len(keys), shared, dtype=torch.long), own_mask], dim=1)
    expanded = [(k.expand(len(keys), -1, -1, -1), v.expand(len(keys), -1, -1, -1)) for k, v in prefix]
    logp, cache = lm.forward(own, mask, positions, expanded, keep=keep if lm.keeps_logits else None)
    column = torch.searchsorted(keep, ends_at) if lm.keeps_logits else ends_at
    last = logp[torch.arange(len(keys)), column.to(logp.device)]
    return ItemBatch(keys, cache, mask, shared + lengths, last)


def first_tokens(items: ItemBatch, rows: list[tuple[int, tuple[int, ...]]]) -> torch.Tensor:
    """log p(first option token | context) per (item, continuation) row."""
    device = items.last.device
    item = torch.tensor([i for i, _ in rows], device=device)
    token = torch.tensor([c[0] for _, c in rows], device=device)
    return items.last[item, token]


def row_bytes(items: ItemBatch) -> int:
    """The bytes of one item's KV cache."""
    return sum(t[0].numel() * t.element_size() for layer in items.cache for t in layer)


def rowwise_rest(
    lm: CausalLM, items: ItemBatch, rows: list[tuple[int, tuple]], width: int | None = None
) -> torch.Tensor:
    """log p(option tokens after the first | context, earlier option tokens), one row per option, its fed tokens
    right-padded to `width` (or the longest)."""
    if all(len(c) == 1 for _, c in rows):
        return torch.zeros(len(rows), device=items.last.device)
    item = torch.tensor([i for i, _ in rows])
    layers = [(k[item.to(k.device)], v[item.to(v.device)]) for k, v in items.cache]
    inputs, in_mask = pad_right([list(c[:-1]) or [lm.pad_id] for _, c in rows], lm.pad_id, width)
    for r, (_, cont) in enumerate(rows):
        in_mask[r, len(cont) - 1 :] = 0  # a one-token option feeds nothing
    mask = torch.cat([items.mask[item], in_mask], dim=1)
    positions = items.ends[item].unsqueeze(1) + torch.arange(inputs.shape[1])
    logp, _ = lm.forward(inputs, mask, positions, layers)
    return picked_sum(lm, logp, [list(c[1:]) for _, c in rows])


def picked_sum(lm: CausalLM, logp: torch.Tensor, targets: list[list[int]]) -> torch.Tensor:
    """Per row: the sum of log p(target token) over the row's targets (rows right-padded; the sum runs over all
    of `logp`'s positions, so that its order depends on the pass's shape, not on the longest target)."""
    ids, mask = pad_right([t or [lm.pad_id] for t in targets], lm.pad_id, logp.shape[1])
    for r, t in enumerate(targets):
        mask[r, len(t) :] = 0
    picked = logp.gather(2, ids.to(logp.device).unsqueeze(2)).squeeze(2)
    return (picked * mask.to(picked.device)).sum(1)
