"""What a log-likelihood request is, what its answer is, and the one rule that pairs a context with a
continuation (lm-evaluation-harness's, `lm_eval.api.model.TemplateLM._encode_pair`), for every backend.

- `ChoiceRequest(context, options, pairing, head)`: the context exactly as the model reads it (after any chat
  template), the option continuations, and `head`: how many leading characters of the context its prompt
  shares with the prompt's other items (system turn, instructions, demonstrations; 0: none). A scorer may run
  that part once for every item on it (`scorer.score_choices`); it is the request's own, so the numbers stay a
  function of the request. Its tokens (`EncodedRequest.head`) are the longest prefix that the head's own
  encoding and the context's share (where a byte-pair merge crosses the boundary, the two differ from there
  on), never the context's last token;
- `OptionScore(loglik, tokens, bytes)`: one option's answer, plain numbers: log p(continuation | context)
  summed over the continuation's tokens, their number, and the UTF-8 bytes of the scored continuation;
- the pairing (`lm-eval`, the default): whitespace that ends the context moves into the continuation ("Answer:
  " + "1" -> "Answer:" + " 1"), so a tokenizer that glues a leading space to a word scores the word's usual
  token; the continuation's tokens are those of `encode(context + continuation)` after the context's (a
  SentencePiece tokenizer encodes " yes" alone as "▁" + "▁yes", inside the whole text as "▁yes"); an empty
  context is the end-of-text token (the first token needs something to be conditioned on). A tokenizer that
  says its model reads a BOS token first (`add_bos_token`: Gemma, Llama, Mistral) gets it in front of the
  context, once (a chat template that writes it keeps its own), and an empty context is then that BOS token,
  as lm-evaluation-harness's `add_bos_token` does; no other special token is added.
- `next-token`, a benchmark's own protocol (Hu et al. 2022's `query_hf.py`): the context encoded as the
  tokenizer does by default (special tokens included, trailing whitespace kept) and each option encoded alone,
  without special tokens, as exactly one token: its score is the log-probability of that token at the next
  position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

PAIRINGS = ("lm-eval", "next-token")


@dataclass(frozen=True)
class ChoiceRequest:
    context: str
    options: tuple[str, ...]
    pairing: str = "lm-eval"
    head: int = 0

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if not 0 <= self.head <= len(self.context):
            raise ValueError(f"a head of {self.head} characters in a context of {len(self.context)}")
        if not self.options:
            raise ValueError(f"a choice request needs options (context {self.context[-60:]!r})")
        if self.pairing not in PAIRINGS:
            raise ValueError(f"pairing {self.pairing!r}: choose one of {', '.join(PAIRINGS)}")


class OptionScore(NamedTuple):
    """One option's score (JSON writes it as [loglik, tokens, bytes])."""

    loglik: float  # log p(continuation | context), summed over the continuation's tokens
    tokens: int  # number of continuation tokens scored (0: the backend does not say)
    bytes: int  # UTF-8 bytes of the scored continuation (trailing whitespace of the context included)


def split_trailing_space(context: str, continuation: str) -> tuple[str, str]:
    """(context without its trailing whitespace, that whitespace + continuation)."""
    stripped = context.rstrip()
    return stripped, context[len(stripped) :] + continuation


@dataclass(frozen=True)
class EncodedRequest:
    context: tuple[int, ...]  # the context's token ids (the end-of-text token for an empty context)
    continuations: tuple[tuple[int, ...], ...]  # per option, the ids scored after the context
    texts: tuple[str, ...]  # per option, the continuation text scored (for byte counts)
    head: int = 0  # how many leading context tokens are the prompt's shared head


def encode_request(tokenizer, request: ChoiceRequest) -> EncodedRequest:
    """The token ids of a request as its pairing says; the context is encoded once for all options.
    `tokenizer` is a transformers tokenizer (called as `tokenizer(text, add_special_tokens=...)`)."""
    if request.pairing == "next-token":
        return _next_token(tokenizer, request)

    def encode(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    bos = _bos(tokenizer)
    ctx = split_trailing_space(request.context, "")[0]
    ctx_ids = encode(ctx) if ctx else []
    conts, texts = [], []
    for option in request.options:
        cont = split_trailing_space(request.context, option)[1]
        ids = encode(ctx + cont)[len(ctx_ids) :] if ctx_ids else encode(cont)
        if not ids:
            raise ValueError(f"the continuation {option!r} encodes to no token after the context")
        conts.append(tuple(ids))
        texts.append(cont)
    if bos and ctx_ids[:1] != bos:
        ctx_ids = bos + ctx_ids
    context = tuple(ctx_ids or [tokenizer.eos_token_id])

    def encode_head(text: str) -> list[int]:
        ids = encode(text)
        return bos + ids if bos and ids[:1] != bos else ids

    return EncodedRequest(context, tuple(conts), tuple(texts), _head_tokens(request, context, encode_head))


def _head_tokens(request: ChoiceRequest, context: tuple[int, ...], encode) -> int:
    """How many leading tokens of `context` are the request's head (see the module's docstring)."""
    if not request.head:
        return 0
    common = 0
    for a, b in zip(encode(request.context[: request.head]), context, strict=False):
        if a != b:
            break
        common += 1
    return min(common, len(context) - 1)


def _bos(tokenizer) -> list[int]:
    """[the BOS id] where the tokenizer adds one by default (its model reads it first), else []."""
    wanted = getattr(tokenizer, "add_bos_token", False) and tokenizer.bos_token_id is not None
    return [tokenizer.bos_token_id] if wanted else []


def _next_token(tokenizer, request: ChoiceRequest) -> EncodedRequest:
    context = tokenizer(request.context)["input_ids"]  # the tokenizer's defaults, as Hu et al. encode prompts
    if not context:
        raise ValueError("the next-token pairing needs a non-empty context")
    conts = []
    for option in request.options:
        ids = tokenizer(option, add_special_tokens=False)["input_ids"]
        if len(ids) != 1:
            raise ValueError(
                f"the next-token pairing scores one token per option, and {option!r} is {len(ids)} tokens"
            )
        conts.append(tuple(ids))
    head = _head_tokens(request, tuple(context), lambda text: tokenizer(text)["input_ids"])
    return EncodedRequest(tuple(context), tuple(conts), tuple(request.options), head)
