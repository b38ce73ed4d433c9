"""The log-likelihood scorer for encoder-decoder LMs (T5, Flan-T5, Tk-Instruct, BART), behind the contract of
`scorer.score_choices`: [[OptionScore per option] per request].

The context is the encoder's input; each option is a decoder continuation after the decoder's start token, its
score the sum of its tokens' log-probabilities (`OptionScore.tokens` lets `ranking` take their mean). Pairing:
- `lm-eval` (lm-evaluation-harness's `_encode_pair` for AutoModelForSeq2SeqLM): whitespace that ends the
  context moves into the continuation, as for causal models; the context is encoded with the tokenizer's
  special tokens (T5 ends it with `</s>`), the continuation apart without them (not inside the whole text: the
  decoder reads it alone);
- `next-token` (Hu et al.'s `query_hf.py`, their protocol for Flan-T5 and Tk-Instruct): the context encoded
  with the tokenizer's defaults, trailing whitespace kept, each option one token read at the decoder's first
  step (the logits their `generate(max_new_tokens=1, output_scores=True)` returns).

Each context is scored alone: one encoder pass, then each option's decoder input in a pass of its own over
that encoding (one-token options share the start token's pass). Batch shapes change float rounding (~1e-6 in
float32 on a CPU, more in bfloat16), so no row is batched with another: an option's numbers are a function of
its context, its tokens and the model only, whatever else the call or the response cache held. The decoder's
inputs are short (an option's tokens); the encoder, the long part, runs once a context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from pragexp.generation.scoring.requests import (
    ChoiceRequest,
    EncodedRequest,
    OptionScore,
    encode_request,
    split_trailing_space,
)

# The recipe, in the backend's identity (the response cache's key): numbers of another recipe never answer for
# it.
SCORING = "seq2seq-decoder/v1"


def encode_seq2seq(tokenizer, request: ChoiceRequest) -> EncodedRequest:
    """The encoder's ids and each option's decoder ids, as the request's pairing says (module docstring)."""
    if request.pairing == "next-token":
        return encode_request(tokenizer, request)  # the context by default, each option one token: the same
    context = split_trailing_space(request.context, "")[0]
    context_ids = tokenizer(context)["input_ids"] or [tokenizer.eos_token_id]
    conts, texts = [], []
    for option in request.options:
        text = split_trailing_space(request.context, option)[1]
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"the continuation {option!r} encodes to no token")
        conts.append(tuple(ids))
        texts.append(text)
    return EncodedRequest(tuple(context_ids), tuple(conts), tuple(texts))


@torch.inference_mode()
def score_seq2seq(
    model, tokenizer, requests: Sequence[ChoiceRequest], on_call: Callable | None = None
) -> list[list[OptionScore]]:
    """[[OptionScore per option] per request], each context alone; `on_call()` once per model forward."""
    encoded = [encode_seq2seq(tokenizer, r) for r in requests]
    wanted: dict[tuple[int, ...], dict[tuple[int, ...], None]] = {}  # context -> its distinct continuations
    for e in encoded:
        wanted.setdefault(e.context, {}).update(dict.fromkeys(e.continuations))
    results: dict[tuple, float] = {}
    for context, conts in wanted.items():
        for cont, value in zip(conts, _score_context(model, context, list(conts), on_call), strict=True):
            results[(context, cont)] = value
    return [
        [
            OptionScore(results[(e.context, c)], len(c), len(t.encode("utf-8")))
            for c, t in zip(e.continuations, e.texts, strict=True)
        ]
        for e in encoded
    ]


def _score_context(model, context: tuple[int, ...], conts: list[tuple[int, ...]], on_call) -> list[float]:
    """log p(continuation | context) per continuation: one encoder pass, then one decoder pass per distinct
    decoder input (one-token options all read the start token's row: one pass for them all)."""
    from transformers.modeling_outputs import BaseModelOutput

    start = decoder_start_id(model)
    hidden = model.get_encoder()(input_ids=torch.tensor([context], device=model.device)).last_hidden_state
    _count(on_call)
    by_input: dict[tuple[int, ...], list[int]] = {}  # decoder input -> the continuations read from it
    for i, cont in enumerate(conts):
        by_input.setdefault((start, *cont[:-1]), []).append(i)
    values = [0.0] * len(conts)
    for fed, which in by_input.items():
        out = model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden),
            decoder_input_ids=torch.tensor([fed], device=model.device),
        )
        _count(on_call)
        logp = torch.log_softmax(out.logits[0].float(), dim=-1)
        for i in which:
            targets = torch.tensor(conts[i], device=logp.device)
            values[i] = float(logp[torch.arange(len(targets), device=logp.device), targets].sum())
    return values


def decoder_start_id(model) -> int:
    """The token the decoder starts from (T5: the pad token), from the generation config or the model's."""
    start = getattr(model.generation_config, "decoder_start_token_id", None)
    start = model.config.decoder_start_token_id if start is None else start
    if start is None:
        raise ValueError(f"{type(model).__name__} names no decoder_start_token_id: it cannot be scored")
    return int(start)


def _count(on_call: Callable | None) -> None:
    if on_call:
        on_call()
