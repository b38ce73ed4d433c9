"""Generation for a decoder-only `llm=hf` model: continuous batching in which a reply depends on its prompt,
the model and the settings (`batch_size` included), never on the prompts decoded beside it, their number or
order.

Float rounding follows a computation's shapes (padding and a batch's row count move a logit by ~1e-5 in
float32, enough to flip a greedy token between near-ties), so every shape a reply meets is fixed by its own
prompt or by the settings:

- a prompt is prefilled alone, at its own length: one pass of shape (1, n), no padding;
- decoding steps run `rows` rows at once (`llm.batch_size`), always that many: a row whose reply has ended
  takes the next prompt at once, and a row with nothing left to decode holds a one-token filler. The linear
  layers (all of the model's arithmetic but attention) then always see (rows, hidden), and a row of a matrix
  product of fixed shape is computed the same way whatever the other rows hold;
- attention is computed row by row (`row_attention`, registered with transformers as an attention
  implementation) over that row's own keys only, copied out of the batch's cache: rows that joined at
  different steps, with prompts of different lengths, never pad one another.

Unlike fixed-width batches (the recipe before, `fixed-rows/v1`), no row decodes a repeat to fill a batch,
prompts of any lengths share the decoding steps, and a batch never waits for its longest reply.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch

from pragexp.generation.backends.base import GenerationParams
from pragexp.generation.backends.sampling import sample_rows
from pragexp.generation.scoring.causal_lm import forward_names

# The recipe of generated replies (part of their cache key).
GENERATION = "rows/v2"
ATTENTION = "pragexp_rows"  # the attention implementation's registered name


def row_attention(module, query, key, value, attention_mask, row_spans=None, **kwargs):
    """transformers' SDPA attention, but in a decoding step each row over the last `row_spans[i]` keys of its
    own (its prompt and its tokens so far: a row's keys always end the cache, since every step appends one key
    to every row), capped at the layer's sliding window where it has one."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if row_spans is None:  # a prompt's prefill, alone: causal, as SDPA does it
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    window = kwargs.get("sliding_window")
    out = []
    for row, span in enumerate(row_spans):
        span = min(span, window) if window else span
        keys = key[row : row + 1, :, -span:].contiguous()  # a copy: the strides then depend on the row alone
        values = value[row : row + 1, :, -span:].contiguous()
        out.append(sdpa_attention_forward(module, query[row : row + 1], keys, values, None, **kwargs)[0])
    return torch.cat(out), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION, row_attention)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)  # a prefill's mask (a sliding window) as SDPA's


@contextmanager
def rows_attention(model):
    """The model's attention is `row_attention` inside the block (generation), what it was after (scoring)."""
    _register()
    config = model.config
    before = config._attn_implementation
    config._attn_implementation = ATTENTION
    try:
        yield
    finally:
        config._attn_implementation = before


def stop_ids(model, tokenizer) -> set[int]:
    """The tokens that end a reply: the generation config's end of text, else the tokenizer's."""
    eos = getattr(model.generation_config, "eos_token_id", None)
    eos = tokenizer.eos_token_id if eos is None else eos
    return {int(i) for i in (eos if isinstance(eos, list | tuple) else [eos]) if i is not None}


@dataclass
class _Row:
    prompt: int  # its index in the call
    span: int  # keys in the cache: its prompt and the tokens fed back so far
    generator: torch.Generator | None
    tokens: list[int] = field(default_factory=list)


class RowDecoder:
    """Decodes prompts (token ids) `rows` rows at a time; `on_reply(prompt index, token ids)` as each ends."""

    def __init__(self, model, rows: int, stop_ids: set[int], filler_id: int):
        self.cache_name, keeps_logits = forward_names(model)
        self.last_only = {"logits_to_keep": 1} if keeps_logits else {}
        self.model, self.rows, self.stop_ids, self.filler_id = model, rows, stop_ids, filler_id
        self.device = model.device

    def run(
        self,
        prompts: list[list[int]],
        params: GenerationParams,
        seeds: list[int] | None,
        on_reply: Callable[[int, list[int]], None],
    ) -> None:
        """Every prompt's reply, the i-th drawn from `seeds[i]`'s stream (`sampling`) where it is sampled; a
        reply ends at a stop token (kept in it) or its budget, and then only (`params.ignore_eos`: the stop
        tokens are never chosen, a reply runs its whole budget)."""
        choose = choose_token(params.temperature, params.top_p, sorted(self.stop_ids) * params.ignore_eos)
        generators = [torch.Generator().manual_seed(int(s)) for s in seeds] if seeds else None
        max_new_tokens = params.max_new_tokens
        if max_new_tokens <= 0:  # no budget: empty replies, no pass
            for i in range(len(prompts)):
                on_reply(i, [])
            return
        waiting = deque(range(len(prompts)))
        slots: list[_Row | None] = [None] * self.rows
        self.cache = None  # the rows' keys and values, each layer's (rows, kv heads, keys, head size)
        with rows_attention(self.model):
            while True:
                for slot in range(self.rows):
                    while slots[slot] is None and waiting:
                        i = waiting.popleft()
                        row = _Row(i, len(prompts[i]), generators[i] if generators else None)
                        row.tokens.append(choose(self._prefill(prompts[i], slot), row))
                        slots[slot] = self._ended(row, max_new_tokens, on_reply)
                if all(row is None for row in slots):
                    return
                logits = self._step(slots)
                for slot, row in enumerate(slots):
                    if row is not None:
                        row.span += 1
                        row.tokens.append(choose(logits[slot : slot + 1], row))
                        slots[slot] = self._ended(row, max_new_tokens, on_reply)
                self._trim(max([row.span for row in slots if row is not None], default=0) + 1)

    def _ended(self, row: _Row, max_new_tokens: int, on_reply) -> _Row | None:
        if row.tokens[-1] in self.stop_ids or len(row.tokens) >= max_new_tokens:
            on_reply(row.prompt, row.tokens)
            return None
        return row

    def _prefill(self, ids: list[int], slot: int) -> torch.Tensor:
        """The prompt's pass alone, (1, vocab) logits of its last position; its keys put in `slot`."""
        from transformers import DynamicCache

        cache = DynamicCache()
        out = self.model(
            input_ids=torch.tensor([ids], device=self.device),
            use_cache=True,
            **self.last_only,
            **{self.cache_name: cache},
        )
        if not hasattr(cache, "layers"):
            raise RuntimeError("llm=hf generation needs transformers >= 4.56 (DynamicCache.layers)")
        self._insert(slot, cache.layers)
        return out.logits[:, -1]

    def _insert(self, slot: int, prompt) -> None:
        """A prompt's keys and values (its cache's layers) at the right end of `slot`, every row left-padded
        first when the prompt is longer than the cache."""
        from transformers import DynamicCache

        n = prompt[0].keys.shape[-2]
        if self.cache is None:
            rows = [tuple(t.new_zeros((self.rows, *t.shape[1:])) for t in (p.keys, p.values)) for p in prompt]
            self.cache = DynamicCache(ddp_cache_data=rows)
        for layer, new in zip(self.cache.layers, prompt, strict=True):
            if layer.keys.shape[-2] < n:
                grow = (0, 0, n - layer.keys.shape[-2], 0)  # zeros before every row's keys
                layer.keys = torch.nn.functional.pad(layer.keys, grow)
                layer.values = torch.nn.functional.pad(layer.values, grow)
            layer.keys[slot, :, -n:] = new.keys[0]
            layer.values[slot, :, -n:] = new.values[0]

    def _step(self, slots: list[_Row | None]) -> torch.Tensor:
        """One decoding step of every row: (rows, vocab) logits. A free row is fed a filler at position 0 that
        attends to itself alone."""
        ids = [[row.tokens[-1]] if row else [self.filler_id] for row in slots]
        positions = [[row.span] if row else [0] for row in slots]
        out = self.model(
            input_ids=torch.tensor(ids, device=self.device),
            position_ids=torch.tensor(positions, device=self.device),
            use_cache=True,
            row_spans=[row.span + 1 if row else 1 for row in slots],
            **{self.cache_name: self.cache},
        )
        return out.logits[:, -1]

    def _trim(self, keep: int) -> None:
        """Drops the keys no row attends to any more, once they are as many as those kept."""
        for layer in self.cache.layers if self.cache is not None else []:
            if layer.keys.shape[-2] > 2 * keep:
                layer.keys, layer.values = (t[:, :, -keep:].contiguous() for t in (layer.keys, layer.values))


def choose_token(
    temperature: float, top_p: float, suppressed: list[int]
) -> Callable[[torch.Tensor, _Row], int]:
    """A row's next token from its (1, vocab) logits: the most likely (ties: the lowest id), or drawn from the
    row's own stream; `suppressed` ids (end of text, where a reply must run its whole budget) never."""

    def choose(logits: torch.Tensor, row: _Row) -> int:
        logits = logits.float()
        if suppressed:
            logits = logits.clone()
            logits[:, suppressed] = float("-inf")
        if temperature > 0:
            return int(sample_rows(logits, temperature, top_p, [row.generator])[0])
        return int(logits[0].argmax())

    return choose
