"""Decoding a reply without losing its reasoning markers.

Decoding with `skip_special_tokens=True` drops every token the tokenizer registers as special; a model whose
`<think>` and `</think>` are special tokens would lose them, and its reasoning would be read as its answer.
The in-process backends decode a reply keeping the reasoning markers (`prompt.reasoning_markers`, which reach
the backend as `llm.reasoning_markers`) and dropping every other special token (end of text, padding,
chat-turn tokens), as before. A tokenizer whose markers are ordinary text decodes exactly as it did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pragexp.prompting.reasoning import DEFAULT_MARKERS


def special_ids(tokenizer) -> set[int]:
    """Every id the tokenizer treats as special: its named special tokens and added tokens marked special."""
    ids = set(tokenizer.all_special_ids)
    decoder = getattr(tokenizer, "added_tokens_decoder", {}) or {}
    ids.update(i for i, token in decoder.items() if getattr(token, "special", False))
    return ids


def special_markers(tokenizer, markers: Sequence[str] = DEFAULT_MARKERS) -> dict[str, int]:
    """{marker: id} for the reasoning markers that are special tokens of `tokenizer` (one token each)."""
    special = special_ids(tokenizer)
    found = {}
    for marker in markers:
        ids = tokenizer.convert_tokens_to_ids([marker])
        if ids and ids[0] in special and ids[0] != tokenizer.unk_token_id:
            found[marker] = ids[0]
    return found


def decode_reply(tokenizer, ids: Sequence[int], markers: Sequence[str] = DEFAULT_MARKERS) -> str:
    """The reply's text: its special tokens dropped, but for the reasoning markers."""
    kept = set(special_markers(tokenizer, markers).values())
    if not kept:
        return tokenizer.decode(ids, skip_special_tokens=True)
    special = special_ids(tokenizer)
    ids = [int(i) for i in ids if int(i) not in special or int(i) in kept]
    return tokenizer.decode(ids, skip_special_tokens=False)


def strip_special(text: str, tokenizer, markers: Sequence[str] = DEFAULT_MARKERS) -> str:
    """A reply decoded with its special tokens (a server's, vLLM's) without them, but for the reasoning
    markers."""
    kept = set(special_markers(tokenizer, markers))
    dropped = sorted(
        (t for t in tokenizer.convert_ids_to_tokens(sorted(special_ids(tokenizer))) if t and t not in kept),
        key=len,
        reverse=True,
    )
    if not dropped:
        return text
    return re.sub("|".join(map(re.escape, dropped)), "", text)
