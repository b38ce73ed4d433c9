"""Multiple-choice scoring with a causal LM: each option's log-likelihood given its context, the shared
prompt computed once.

A request is a `ChoiceRequest(context, options)`: the context exactly as the model reads it (after the chat
template) and the option continuations. `score_choices(model, tokenizer, requests)` returns, per option, an
`OptionScore(loglik, tokens, bytes)` of plain numbers: log p(continuation | context) summed over the
continuation's tokens, their number, and the UTF-8 bytes of the scored continuation text. `rank` orders the
options by `sum`, `per_token` (loglik / tokens) or `per_byte` (loglik / bytes), optionally calibrated by a
content-free input (`calibrate`).

Conventions (lm-evaluation-harness's, `lm_eval.api.model.TemplateLM.loglikelihood` and `_encode_pair`):
whitespace that ends the context moves into the continuation (`backend.split_trailing_space`); the context's
tokens are `encode(context)`, the continuation's are those of `encode(context + continuation)` after the
context's, and the model reads `context tokens + continuation tokens`; an empty context is the end-of-text
token (the first token needs something to be conditioned on). Nothing adds special tokens: a chat template
writes its own. Sequences longer than the model's window are not truncated (an error, not a silent cut).

How it is fast (the numbers equal one plain forward pass per (context, option) to float rounding, ~1e-6 in
float32; tests/test_choices.py checks 1e-4):

1. the longest token prefix shared by every context of the call (the system prompt and few-shot
   demonstrations) is run once, and its KV cache reused by every item;
2. items run in batches of similar length, each item's own part of the context once, on that cache expanded
   over the batch (right-padded; masked pads, explicit positions);
3. every option of every item of the batch runs on its item's cache (rows repeated per option), in one batch.

Identical contexts (a content-free input used for every item) run once. Which items share a batch depends
only on the set of requests and `batch_size`, never on their order; a different batch size or set changes
float rounding only (~1e-6), the same limit as batched generation (see `hf.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch

from pragexp.generation.backend import split_trailing_space

SCORING = "lm-eval-pair/v1"  # the convention, in the response cache's key: change it when the numbers change
NORMALIZATIONS = ("sum", "per_token", "per_byte")
CONTENT_FREE = ("N/A",)  # Zhao et al. 2021 also use "" and "[MASK]"; any list may be passed
OPTION_ROWS = 8  # option rows per item of a batch in one forward pass (step 3 of score_choices)
# ... and at most this many bytes of repeated KV cache in that pass: each option row carries its item's whole
# cache (a 5-shot GRICE QA prompt of ~2,100 tokens is ~97 MB a row for SmolLM2; 128 rows ran out of 24 GB).
OPTION_CACHE_BYTES = 1 << 30


@dataclass(frozen=True)
class ChoiceRequest:
    context: str
    options: tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if not self.options:
            raise ValueError(f"a choice request needs options (context {self.context[-60:]!r})")


class OptionScore(NamedTuple):
    """One option's score: plain numbers (JSON writes it as [loglik, tokens, bytes])."""

    loglik: float  # log p(continuation | context), summed over the continuation's tokens
    tokens: int  # number of continuation tokens scored
    bytes: int  # UTF-8 bytes of the scored continuation (trailing whitespace of the context included)


def encode_request(encode: Callable[[str], list[int]], eos_id: int, request: ChoiceRequest):
    """(context ids, [continuation ids per option], [scored continuation text per option]), as
    lm-evaluation-harness encodes a pair; the context is encoded once for all options."""
    ctx = split_trailing_space(request.context, "")[0]
    ctx_ids = encode(ctx) if ctx else []
    conts, texts = [], []
    for option in request.options:
        _, cont = split_trailing_space(request.context, option)
        ids = encode(ctx + cont)[len(ctx_ids) :] if ctx_ids else encode(cont)
        if not ids:
            raise ValueError(f"the continuation {option!r} encodes to no token after the context")
        conts.append(ids)
        texts.append(cont)
    return (ctx_ids or [eos_id]), conts, texts


def _common_prefix(sequences: list[tuple[int, ...]]) -> int:
    """Length of the longest prefix all sequences share, at most min(len) - 1 (every item keeps a token of
    its own, whose logits score its options' first token)."""
    first, limit = sequences[0], min(len(s) for s in sequences) - 1
    n = 0
    while n < limit and all(s[n] == first[n] for s in sequences):
        n += 1
    return n


def _layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The (keys, values) of each layer of a transformers DynamicCache, any version."""
    if hasattr(cache, "layers"):  # transformers >= 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    if hasattr(cache, "key_cache"):
        return list(zip(cache.key_cache, cache.value_cache, strict=True))
    return [(k, v) for k, v, *_ in cache]


def _cache(layers: list[tuple[torch.Tensor, torch.Tensor]], config):
    """A fresh DynamicCache holding `layers` (the model's forward appends to it in place)."""
    from transformers import DynamicCache

    try:
        return DynamicCache(ddp_cache_data=layers, config=config)
    except TypeError:  # transformers < 4.56
        return DynamicCache.from_legacy_cache(tuple(layers))


def _pad(rows: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


@torch.inference_mode()
def score_choices(
    model,
    tokenizer,
    requests: Sequence[ChoiceRequest],
    batch_size: int = 16,
    on_call: Callable[[], None] | None = None,
) -> list[list[OptionScore]]:
    """[[OptionScore per option] per request] for a transformers causal LM with a DynamicCache (Llama,
    Mistral, Qwen, SmolLM, GPT-2 ...). `batch_size` is the number of distinct contexts per batch (their
    options run together); `on_call` is called once per model forward (the backend's call counter)."""
    return [
        scores
        for _, scores in option_logliks(model, tokenizer, requests, batch_size, on_call, on_device=False)
    ]


def option_logliks(
    model,
    tokenizer,
    requests: Sequence[ChoiceRequest],
    batch_size: int = 16,
    on_call: Callable[[], None] | None = None,
    on_device: bool = True,
) -> list[tuple[torch.Tensor, list[OptionScore]]]:
    """Per request: its options' log-likelihoods as one tensor (n,), differentiable when autograd is on
    (fine-tuning: `score_choices`'s numbers, with gradients), and their `OptionScore`s (token and byte
    counts for normalisation). The tensors stay on the model's device (`on_device`, training) or come to the
    CPU a chunk at a time (scoring). A model in training mode with gradient checkpointing keeps no KV cache
    (transformers turns it off), so each (context, option) then runs as one whole sequence."""
    checkpointing = getattr(model, "is_activation_checkpointing", None)  # transformers >= 5 names it so
    if checkpointing is None:
        checkpointing = getattr(model, "is_gradient_checkpointing", False)
    whole = bool(checkpointing) and model.training
    encoded, results = _score(
        model, tokenizer, requests, batch_size, on_call, whole_sequences=whole, on_device=on_device
    )
    out = []
    for key, conts, texts in encoded:
        values = torch.stack([results[(key, cont)] for cont in conts])
        counts = [
            OptionScore(v, len(cont), len(text.encode("utf-8")))
            for v, cont, text in zip(values.detach().cpu().tolist(), conts, texts, strict=True)
        ]
        out.append((values, counts))
    return out


def _score(
    model, tokenizer, requests, batch_size, on_call, whole_sequences: bool = False, on_device: bool = False
):
    """(encoded requests, {(context ids, continuation ids): log-likelihood tensor}) for `score_choices` and
    `option_logliks`; the ambient autograd mode decides whether the tensors carry gradients; they stay on the
    model's device with `on_device` (training), else come to the CPU."""
    if not requests:
        return [], {}
    device = model.device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    keeps = _keeps_logits(model)

    def forward(ids, mask, positions, layers, keep=None):
        """Log-probabilities (at the positions `keep` only, when given and the model can: the output layer
        over the whole vocabulary is the costliest part of a short continuation's pass) and the KV cache."""
        extra = (
            {"logits_to_keep": keep.to(device) if torch.is_tensor(keep) else keep}
            if keeps and keep is not None
            else {}
        )
        out = model(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            past_key_values=_cache(layers, model.config) if layers else None,
            use_cache=not whole_sequences,
            **extra,
        )
        if on_call:
            on_call()
        logp = torch.log_softmax(out.logits.float(), dim=-1)
        return logp, (None if whole_sequences else _layers(out.past_key_values))

    # Distinct contexts, each with the distinct continuations asked of it.
    contexts: dict[tuple[int, ...], dict[tuple[int, ...], None]] = {}
    encoded = []
    for request in requests:
        ctx_ids, conts, texts = encode_request(encode, tokenizer.eos_token_id, request)
        key = tuple(ctx_ids)
        options = contexts.setdefault(key, {})
        for cont in conts:
            options.setdefault(tuple(cont), None)
        encoded.append((key, [tuple(c) for c in conts], texts))
    if whole_sequences:
        return encoded, _score_whole(forward, contexts, batch_size, pad_id, on_device)

    # 1. The prefix every context shares, once.
    keys = sorted(contexts, key=lambda k: (-len(k), k))  # longest first; independent of request order
    shared = _common_prefix(keys)
    prefix: list[tuple[torch.Tensor, torch.Tensor]] = []
    if shared:
        ids = torch.tensor([keys[0][:shared]], dtype=torch.long)
        _, prefix = forward(ids, torch.ones_like(ids), torch.arange(shared).unsqueeze(0), None, keep=1)

    results: dict[tuple[tuple[int, ...], tuple[int, ...]], torch.Tensor] = {}
    for start in range(0, len(keys), batch_size):
        batch = keys[start : start + batch_size]
        # 2. Each item's own part of its context, on the shared prefix's cache expanded over the batch.
        own, own_mask = _pad([list(k[shared:]) for k in batch], pad_id)
        lengths = own_mask.sum(1)
        mask = torch.cat([torch.ones(len(batch), shared, dtype=torch.long), own_mask], dim=1)
        positions = shared + torch.arange(own.shape[1]).expand(len(batch), -1)
        expanded = [(k.expand(len(batch), -1, -1, -1), v.expand(len(batch), -1, -1, -1)) for k, v in prefix]
        # Each item's last position predicts its options' first token: only those positions' logits are needed.
        ends = torch.unique(lengths - 1)
        logp, item_cache = forward(own, mask, positions, expanded, keep=ends if keeps else None)
        column = torch.searchsorted(ends, lengths - 1) if keeps else lengths - 1
        last = logp[torch.arange(len(batch)), column.to(logp.device)]

        # 3. Every option of every item of the batch, on its item's cache (rows repeated per option), at most
        # `batch_size * OPTION_ROWS` rows and OPTION_CACHE_BYTES of repeated cache at once (GRICE QA has 52
        # options: the repeated caches add up).
        all_rows = [(i, cont) for i, key in enumerate(batch) for cont in contexts[key]]
        row_bytes = sum(t[0].numel() * t.element_size() for layer in item_cache for t in layer)
        step = max(1, min(batch_size * OPTION_ROWS, OPTION_CACHE_BYTES // max(1, row_bytes)))
        for row_start in range(0, len(all_rows), step):
            rows = all_rows[row_start : row_start + step]
            item_of_row = torch.tensor([i for i, _ in rows])
            firsts = last[
                item_of_row.to(last.device), torch.tensor([c[0] for _, c in rows], device=last.device)
            ]
            rest = torch.zeros(len(rows), device=firsts.device)
            if any(len(cont) > 1 for _, cont in rows):
                layers = [(k[item_of_row.to(k.device)], v[item_of_row.to(v.device)]) for k, v in item_cache]
                inputs, in_mask = _pad([list(cont[:-1]) or [pad_id] for _, cont in rows], pad_id)
                for r, (_, cont) in enumerate(rows):
                    in_mask[r, len(cont) - 1 :] = 0  # a one-token option feeds nothing
                full_mask = torch.cat([mask[item_of_row], in_mask], dim=1)
                positions = (shared + lengths[item_of_row]).unsqueeze(1) + torch.arange(inputs.shape[1])
                logp_opt, _ = forward(inputs, full_mask, positions, layers)
                rest = _picked_sum(logp_opt, [list(cont[1:]) for _, cont in rows], pad_id)
            values = firsts + rest
            values = values if on_device else values.cpu()  # scoring: one copy per chunk, not per option
            for r, (i, cont) in enumerate(rows):
                results[(batch[i], cont)] = values[r]
    return encoded, results


def _keeps_logits(model) -> bool:
    """Whether the model's forward takes `logits_to_keep` (transformers >= 4.50 causal LMs)."""
    import inspect

    base = model.get_base_model() if callable(getattr(model, "get_base_model", None)) else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


def _picked_sum(logp: torch.Tensor, targets: list[list[int]], pad_id: int) -> torch.Tensor:
    """Per row: the sum of log p(target token) over the row's targets (rows right-padded)."""
    ids, mask = _pad([t or [pad_id] for t in targets], pad_id)
    for r, t in enumerate(targets):
        mask[r, len(t) :] = 0
    width = ids.shape[1]
    picked = logp[:, :width].gather(2, ids.to(logp.device).unsqueeze(2)).squeeze(2)
    return (picked * mask.to(picked.device)).sum(1)


def _score_whole(forward, contexts, batch_size: int, pad_id: int, on_device: bool) -> dict:
    """Every (context, option) as one whole sequence, `batch_size` sequences per forward pass."""
    pairs = sorted((key, cont) for key, conts in contexts.items() for cont in conts)
    results = {}
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        ids, mask = _pad([list(key + cont) for key, cont in chunk], pad_id)
        logp, _ = forward(ids, mask, torch.arange(ids.shape[1]).expand(len(chunk), -1), None)
        # Position t predicts token t + 1: the option's tokens are read from the context's last position on.
        starts = [len(key) - 1 for key, _ in chunk]
        width = max(len(cont) for _, cont in chunk)
        padded = torch.nn.functional.pad(logp, (0, 0, 0, width))  # room to slice past a short row's end
        rows = torch.stack([padded[r, s : s + width] for r, s in enumerate(starts)])
        sums = _picked_sum(rows, [list(cont) for _, cont in chunk], pad_id)
        sums = sums if on_device else sums.cpu()
        for r, pair in enumerate(chunk):
            results[pair] = sums[r]
    return results


# -- ranking and calibration --------------------------------------------------------------------------


def normalized(scores: Sequence[OptionScore], normalization: str = "sum") -> list[float]:
    """Each option's score: `sum` (loglik), `per_token` (loglik / tokens) or `per_byte` (loglik / bytes)."""
    if normalization == "sum":
        return [float(s.loglik) for s in scores]
    if normalization == "per_token":
        if any(s.tokens <= 0 for s in scores):
            raise ValueError("this backend reports no token counts: use prompt.scoring=sum or per_byte")
        return [s.loglik / s.tokens for s in scores]
    if normalization == "per_byte":
        return [s.loglik / max(s.bytes, 1) for s in scores]
    raise ValueError(f"normalization {normalization!r}: choose one of {', '.join(NORMALIZATIONS)}")


def calibrate(scores: Sequence[OptionScore], content_free: Sequence[Sequence[OptionScore]]) -> list[float]:
    """Contextual calibration (Zhao et al. 2021, "Calibrate Before Use", eq. with W = diag(p_cf)^-1, b = 0),
    in log space:

        score(y) = log p(y | x) - log p_cf(y),    p_cf(y) = mean_j softmax_y' log p(y' | cf_j)

    where log p(y | x) is the option's summed log-likelihood under the item's prompt and cf_j are the
    content-free inputs ("N/A", ...) put through the same template, scored for the same options; p_cf is
    each content-free prompt's distribution over the options, averaged over the content-free inputs (Zhao
    et al.'s average). Zhao et al.'s softmax over the item's own options adds the same constant to every
    option, so it is left out: the ranking is theirs. With one content-free input this is, up to that
    constant, the domain-conditional PMI of Holtzman et al. 2021 (log p(y | x) - log p(y | domain premise)).
    """
    if not content_free:
        raise ValueError("calibration needs at least one content-free scoring of the options")
    n = len(scores)
    dists = []
    for cf in content_free:
        if len(cf) != n:
            raise ValueError(f"content-free scores hold {len(cf)} options, the item {n}")
        dists.append(torch.softmax(torch.tensor([s.loglik for s in cf], dtype=torch.float64), 0))
    p_cf = torch.stack(dists).mean(0)
    return [float(s.loglik) - math.log(float(p)) for s, p in zip(scores, p_cf, strict=True)]


def rank(
    scores: Sequence[OptionScore],
    normalization: str = "sum",
    content_free: Sequence[Sequence[OptionScore]] | None = None,
) -> list[int]:
    """Option indices, best first (ties: the earlier option first). With `content_free`, options are ranked
    by `calibrate` (on summed log-likelihoods: calibration is defined on the options' probabilities, so it
    takes `normalization="sum"` only)."""
    if content_free is not None:
        if normalization != "sum":
            raise ValueError(f"calibration works on summed log-likelihoods, not {normalization!r}")
        values = calibrate(scores, content_free)
    else:
        values = normalized(scores, normalization)
    return sorted(range(len(values)), key=lambda i: (-values[i], i))
