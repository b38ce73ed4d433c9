"""The one log-likelihood scorer: each option's log-likelihood given its context, for any transformers causal
LM with a DynamicCache (Llama, Mistral, Qwen, SmolLM, GPT-2 ...), in inference (`score_choices`) and, with
gradients, in fine-tuning (`option_logliks`).

Requests are paired as `requests.encode_request` says (lm-evaluation-harness's rule). The numbers equal one
plain forward pass per (context, option) up to float rounding (~1e-6 in float32; tests/test_scorer.py checks
1e-4). How it is fast:

1. a prefix of the contexts runs once, and its KV cache is reused by every item on it (in scoring, by the next
   calls too: `head_cache`);
2. items run in batches, each item's own part of the context once, on that cache expanded over the batch
   (padded; masked pads, explicit positions);
3. the options of each item run on the item's cache in one row: the options' tokens side by side, each
   attending to the context and to its own earlier tokens only (a 4D attention mask, positions restarting
   after the context), so an item's cache is read once for all its options, not copied per option: the items
   of a pass are a slice of the batch (a view of its cache), and the model's one copy (its cache appends the
   options' keys) is bounded by `OPTION_CACHE_BYTES` as well as `OPTION_TOKENS`. Where a model does not honour
   such a mask (checked once per model class against the plain way, `_packing_works`), each option gets its
   own row on a copy of the item's cache, at most `OPTION_CACHE_BYTES` of copies at a time.

Identical contexts (a content-free input used for every item) run once.

Scoring (`score_choices`, answers the response cache keeps) makes a context's scores a function of the request
and the model only, the same cold or warm, alone or beside any other requests, whatever their order (issue
27): the prefix of step 1 is the request's own head (`ChoiceRequest.head`: the system turn, instructions and
demonstrations its prompt shares with the prompt's other items), never what the call's contexts happen to
share; step 2's passes have shapes that depend on the item alone (`passes`: own parts padded to a length
bucket, as many rows as the bucket's width allows, repeats filling a short pass); in step 3 each longer option
has a row of its own on a copy of its item's cache, in fixed passes likewise (a packed row would make an
option's numbers depend on the request's other options, and the cache keeps each option apart). Fine-tuning
(`option_logliks`, with gradients, never cached) shares the longest token prefix of the call's contexts and
batches `batch_size` items of similar length. A model in training mode with gradient checkpointing keeps no KV
cache (transformers turns it off), so each (context, option) then runs as one whole sequence (in scoring, one
at a time).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from pragexp.generation.scoring import passes
from pragexp.generation.scoring.arrivals import Arrivals
from pragexp.generation.scoring.causal_lm import CausalLM
from pragexp.generation.scoring.head_cache import HeadCache
from pragexp.generation.scoring.passes import (
    ItemBatch,
    first_tokens,
    packed_rest,
    picked_sum,
    row_bytes,
    rowwise_rest,
    run_items,
)
from pragexp.generation.scoring.requests import ChoiceRequest, EncodedRequest, OptionScore, encode_request
from pragexp.utils.tensors import pad_right

log = logging.getLogger(__name__)
# The recipe (pairing and computation), in the response cache's key: v2 reads each item's cache once for all
# its options (issue 25); v3 scores each context alone (the same numbers whatever the cache holds); v4 runs
# the request's head once and the own parts in fixed-shape batches (`passes`), so answers stored by an earlier
# recipe never answer for it.
SCORING = "lm-eval-pair/v4"
OPTION_TOKENS = 4096  # packed option pass: at most this many (items x option tokens) positions at once ...
OPTION_ROWS = 8  # per-row option pass: option rows per item of a batch in one forward pass ...
# ... and, in either pass, at most this many bytes of KV cache copied at once (a 5-shot GRICE QA prompt of
# ~2,100 tokens is ~97 MB a row for SmolLM2: 128 rows ran out of 24 GB)
OPTION_CACHE_BYTES = 1 << 30
Pair = tuple[tuple, tuple[int, ...]]  # (context key, continuation ids)
# (model class, attention implementation, dtype) -> packed options give the same
_PACKING: dict[tuple, bool] = {}


@torch.inference_mode()
def score_choices(
    model,
    tokenizer,
    requests: Sequence[ChoiceRequest],
    on_call: Callable | None = None,
    heads: HeadCache | None = None,
    on_scored: Callable[[int, list[OptionScore]], None] | None = None,
    shapes: passes.PassShapes = passes.SHAPES_V4,
) -> list[list[OptionScore]]:
    """[[OptionScore per option] per request], each a function of its request and the model only (the numbers
    do not depend on the other requests of the call); `on_call()` is called once per model forward (a
    backend's call counter); `heads` keeps the heads' caches for the next call (a backend's, across a run's
    batches); `on_scored(i, scores)` gets each request's scores as soon as they are all computed (the response
    cache); `shapes`: the passes' shape table (`passes.PassShapes`, part of the recipe)."""
    lm = CausalLM(model, tokenizer, on_call)
    encoded = [encode_request(tokenizer, r) for r in requests]
    if lm.whole_sequences:  # no KV cache: each (context, option) whole, alone
        results = _score_whole(lm, _wanted(encoded, lambda e: e.context), 1)
        return [_collect(e, results, False, e.context)[1] for e in encoded]
    arrived = Arrivals(encoded, _head_key, on_scored) if on_scored else None
    wanted, heads = _wanted(encoded, _head_key), heads or HeadCache(max_bytes=0)
    results = _score_fixed(lm, wanted, heads, arrived, shapes)
    return [_collect(e, results, False, _head_key(e))[1] for e in encoded]


def _head_key(e: EncodedRequest) -> tuple:
    return (e.context, e.head)


def option_logliks(
    model,
    tokenizer,
    requests: Sequence[ChoiceRequest],
    batch_size: int = 16,
    on_call: Callable | None = None,
    on_device: bool = True,
) -> list[tuple[torch.Tensor, list[OptionScore]]]:
    """Per request: its options' log-likelihoods as one (n,) tensor, differentiable when autograd is on, and
    their `OptionScore`s. The tensors stay on the model's device (`on_device`, training) or come to the CPU a
    chunk at a time. The call's contexts share a prefix and batches (the numbers' rounding depends on
    them)."""
    lm = CausalLM(model, tokenizer, on_call)
    encoded = [encode_request(tokenizer, r) for r in requests]
    wanted = _wanted(encoded, lambda e: e.context)
    if lm.whole_sequences:
        results = _score_whole(lm, wanted, batch_size)
    else:
        results = _score_on_cache(lm, wanted, batch_size)
    return [_collect(e, results, on_device, e.context) for e in encoded]


def _wanted(encoded: list[EncodedRequest], key: Callable) -> dict[tuple, dict[tuple[int, ...], None]]:
    """context key -> its distinct continuations."""
    wanted: dict[tuple, dict[tuple[int, ...], None]] = {}
    for e in encoded:
        wanted.setdefault(key(e), {}).update(dict.fromkeys(e.continuations))
    return wanted


def _collect(
    e: EncodedRequest, results: dict, on_device: bool, key
) -> tuple[torch.Tensor, list[OptionScore]]:
    values = torch.stack([results[(key, c)] for c in e.continuations])
    values = values if on_device else values.cpu()
    counts = [
        OptionScore(v, len(c), len(t.encode("utf-8")))
        for v, c, t in zip(values.detach().cpu().tolist(), e.continuations, e.texts, strict=True)
    ]
    return values, counts


# -- scoring: each context alone, in passes of fixed shapes (`passes.plan`) ----------------------------------


def _score_fixed(
    lm: CausalLM,
    wanted: dict,
    heads: HeadCache,
    arrived: Arrivals | None = None,
    shapes: passes.PassShapes = passes.SHAPES_V4,
) -> dict[Pair, torch.Tensor]:
    """Scoring's way (`passes.plan` with the shape table `shapes`): per head, its cache once (or kept from an
    earlier call); per pass, the rows' own parts; then the rest of the longer options, gathered over the
    passes of one (head, width) so that their passes are full. `arrived(results)` after each pass."""
    results: dict[Pair, torch.Tensor] = {}
    for head, head_passes in passes.plan(wanted, shapes):
        prefix = heads.prefix(lm, head)
        for width, group in itertools.groupby(head_passes, key=lambda p: p.width):
            pending: dict[int, list[_OptionRow]] = {}  # an option's padded width -> rows waiting for a pass
            for one_pass in group:
                owns = [list(context[len(head) :]) for context, _ in one_pass.rows]
                items = run_items(lm, list(one_pass.rows), owns, len(head), prefix, width, shapes)
                for row in _first_tokens_fixed(items, one_pass.real, wanted, results):
                    option_width = shapes.option_width(len(row.cont) - 1)
                    rows = pending.setdefault(option_width, [])
                    rows.append(row)
                    if len(rows) == _option_pass_rows(rows, shapes):
                        results.update(_options_fixed(lm, pending.pop(option_width), shapes))
                if arrived:
                    arrived(results)
            for rows in pending.values():
                results.update(_options_fixed(lm, rows, shapes))
                if arrived:
                    arrived(results)
    return results


@dataclass(frozen=True)
class _OptionRow:
    """A longer option waiting for its pass: its item's pass, the item's row there, the option's tokens."""

    items: ItemBatch
    row: int
    cont: tuple[int, ...]


def _first_tokens_fixed(items: ItemBatch, real: int, wanted: dict, results: dict) -> list[_OptionRow]:
    """Step 3's first part: every option's first token from the item pass (a one-token option's whole score,
    into `results`); the longer options' rows, for `_options_fixed`."""
    longer = []
    for i in range(real):
        for cont in wanted[items.keys[i]]:
            if len(cont) == 1:
                results[(items.keys[i], cont)] = items.last[i, cont[0]]
            else:
                longer.append(_OptionRow(items, i, cont))
    return longer


def _option_pass_rows(rows: list[_OptionRow], shapes: passes.PassShapes) -> int:
    """The rows of a pass of these options (one width, one cache length): the shape table's, at most
    OPTION_CACHE_BYTES of cache copies."""
    width, items = shapes.option_width(len(rows[0].cont) - 1), rows[0].items
    return min(shapes.option_rows_for(width), max(1, OPTION_CACHE_BYTES // max(1, row_bytes(items))))


def _options_fixed(
    lm: CausalLM, rows: list[_OptionRow], shapes: passes.PassShapes
) -> dict[Pair, torch.Tensor]:
    """The rest of longer options of one width on items of one (head, width): a row each on a copy of its
    item's cache, in passes of `_option_pass_rows` rows (the last filled with repeats of its first row), so
    that an option's numbers depend on its context and its tokens only: not on the other options of its
    request (the response cache keeps each option apart) nor on which items shared a pass."""
    results: dict[Pair, torch.Tensor] = {}
    width = shapes.option_width(len(rows[0].cont) - 1)
    for chunk, n in passes.filled(rows, _option_pass_rows(rows, shapes)):
        items = ItemBatch(
            [r.items.keys[r.row] for r in chunk],
            [
                tuple(
                    torch.cat([r.items.cache[layer][kv][r.row : r.row + 1] for r in chunk]) for kv in (0, 1)
                )
                for layer in range(len(chunk[0].items.cache))
            ],
            torch.cat([r.items.mask[r.row : r.row + 1] for r in chunk]),
            torch.cat([r.items.ends[r.row : r.row + 1] for r in chunk]),
            torch.cat([r.items.last[r.row : r.row + 1] for r in chunk]),
        )
        indexed = [(j, r.cont) for j, r in enumerate(chunk)]
        values = first_tokens(items, indexed[:n]) + rowwise_rest(lm, items, indexed, width)[:n]
        results.update(((items.keys[j], cont), values[j]) for j, cont in indexed[:n])
    return results


# -- fine-tuning: the call's shared prefix, batches of `batch_size` items, gradients -------------------------


def _score_on_cache(lm: CausalLM, wanted: dict, batch_size: int) -> dict[Pair, torch.Tensor]:
    keys = sorted(wanted, key=lambda k: (-len(k), k))  # longest first; independent of request order
    shared, prefix = _shared_prefix(lm, keys)
    results: dict[Pair, torch.Tensor] = {}
    for start in range(0, len(keys), batch_size):
        keys_now = keys[start : start + batch_size]
        items = run_items(lm, keys_now, [list(k[shared:]) for k in keys_now], shared, prefix)
        options = [list(wanted[k]) for k in items.keys]
        if any(len(c) > 1 for conts in options for c in conts) and not _packing_works(lm, items, options):
            results.update(_options_rowwise(lm, items, options, batch_size))
        else:
            results.update(_options_packed(lm, items, options))
    return results


def _shared_prefix(lm: CausalLM, keys: list[tuple[int, ...]]) -> tuple[int, list]:
    """The length of the token prefix every context shares (each keeps at least its last token, whose logits
    score its options' first token) and that prefix's KV cache."""
    first, limit = keys[0], min(len(k) for k in keys) - 1
    shared = 0
    while shared < limit and all(k[shared] == first[shared] for k in keys):
        shared += 1
    return shared, lm.prefix_cache(first[:shared])


def _packing_works(lm: CausalLM, items: ItemBatch, options: list[list[tuple]]) -> bool:
    """Whether this kind of model honours the packed pass's 4D mask: checked once per (class, attention
    implementation, dtype) on the first item with a multi-token option, its longest options packed against one
    row each (at most OPTION_ROWS of them, or OPTION_CACHE_BYTES of copies: 52 rows of a 5-shot GRICE QA
    prompt had taken 7 GB)."""
    if lm.packing_key not in _PACKING:
        i = next(i for i, conts in enumerate(options) if any(len(c) > 1 for c in conts))
        # A few of its options (at least two, so that one could see another): each plain row copies the cache.
        few = max(2, min(OPTION_ROWS, OPTION_CACHE_BYTES // max(1, row_bytes(items))))
        checked = [*options[:i], sorted(options[i], key=len, reverse=True)[:few], *options[i + 1 :]]
        rows = [(i, c) for c in checked[i]]
        mode = lm.model.training
        lm.model.eval()  # dropout would make the two passes differ
        try:
            with torch.no_grad():
                packed = packed_rest(lm, items, [i], checked)
                plain = rowwise_rest(lm, items, rows)
        finally:
            lm.model.train(mode)
        tolerance = 1e-3 if lm.packing_key[2] == torch.float32 else 0.25
        _PACKING[lm.packing_key] = bool((packed - plain).abs().max() <= tolerance)
        if not _PACKING[lm.packing_key]:
            log.warning(
                "%s does not honour a 4D attention mask (packed options differ by %.3g): options are "
                "scored one row each",
                lm.packing_key[0],
                float((packed - plain).abs().max()),
            )
    return _PACKING[lm.packing_key]


def _options_packed(lm: CausalLM, items: ItemBatch, options: list[list[tuple]]) -> dict[Pair, torch.Tensor]:
    """Step 3 with one row per item: the options' tokens side by side (each but its last token is fed), each
    attending to the context and its own earlier tokens, at most `OPTION_TOKENS` positions per pass."""
    results: dict[Pair, torch.Tensor] = {}
    width = [sum(len(c) - 1 for c in conts) for conts in options]
    order, item_bytes = list(range(len(items.keys))), row_bytes(items)
    while order:
        chunk = _take_chunk(order, width, item_bytes)
        rows = [(i, c) for i in chunk for c in options[i]]
        values = first_tokens(items, rows)
        if max(width[i] for i in chunk) > 0:
            values = values + packed_rest(lm, items, chunk, options)
        for r, (i, cont) in enumerate(rows):
            results[(items.keys[i], cont)] = values[r]
    return results


def _take_chunk(order: list[int], width: list[int], row_bytes: int) -> list[int]:
    """The next items (taken from the front of `order`: consecutive) whose padded option rows fit in
    OPTION_TOKENS and whose caches fit in OPTION_CACHE_BYTES."""
    chunk = [order.pop(0)]
    while (
        order
        and (len(chunk) + 1) * max(width[i] for i in [*chunk, order[0]]) <= OPTION_TOKENS
        and (len(chunk) + 1) * row_bytes <= OPTION_CACHE_BYTES
    ):
        chunk.append(order.pop(0))
    return chunk


def _options_rowwise(lm: CausalLM, items: ItemBatch, options: list[list[tuple]], batch_size: int) -> dict:
    """Step 3 with one row per (item, option), each on a copy of its item's cache (models that do not honour
    a 4D attention mask), at most `batch_size * OPTION_ROWS` rows and OPTION_CACHE_BYTES of copies at once."""
    rows_all = [(i, c) for i, conts in enumerate(options) for c in conts]
    step = max(1, min(batch_size * OPTION_ROWS, OPTION_CACHE_BYTES // max(1, row_bytes(items))))
    results: dict[Pair, torch.Tensor] = {}
    for start in range(0, len(rows_all), step):
        rows = rows_all[start : start + step]
        values = first_tokens(items, rows) + rowwise_rest(lm, items, rows)
        for r, (i, cont) in enumerate(rows):
            results[(items.keys[i], cont)] = values[r]
    return results


# -- whole sequences (gradient checkpointing) ----------------------------------------------------------------


def _score_whole(lm: CausalLM, wanted: dict, batch_size: int) -> dict[Pair, torch.Tensor]:
    """Every (context, option) as one whole sequence, `batch_size` sequences per forward pass."""
    pairs = sorted((key, cont) for key, conts in wanted.items() for cont in conts)
    results = {}
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        ids, mask = pad_right([list(key + cont) for key, cont in chunk], lm.pad_id)
        logp, _ = lm.forward(ids, mask, torch.arange(ids.shape[1]).expand(len(chunk), -1))
        # Position t predicts token t + 1: the option's tokens are read from the context's last position on.
        width = max(len(cont) for _, cont in chunk)
        padded = torch.nn.functional.pad(logp, (0, 0, 0, width))  # room to slice past a short row's end
        rows = torch.stack(
            [padded[r, len(key) - 1 : len(key) - 1 + width] for r, (key, _) in enumerate(chunk)]
        )
        sums = picked_sum(lm, rows, [list(cont) for _, cont in chunk])
        for r, pair in enumerate(chunk):
            results[pair] = sums[r]
    return results
