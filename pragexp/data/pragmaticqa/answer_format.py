"""The target a PragmatiCQA generator learns to write, and how its output is read back.

    <literal span> </lit> <literal span> </lit> <pragmatic span> </prag> <final answer>

Each span is closed by the tag of its kind; what follows the last tag is the final answer (the tokenizer's
end-of-sequence token ends it). `</lit>` and `</prag>` are added to the generator's tokenizer as special
tokens. Reading tolerates malformed output: a segment is literal or pragmatic by the tag that closes it,
text after the last tag is the answer, and with no tag at all the whole output is the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LIT, PRAG = "</lit>", "</prag>"
TAGS = (LIT, PRAG)
_SPLIT = re.compile(f"({re.escape(LIT)}|{re.escape(PRAG)})")


@dataclass(frozen=True)
class ParsedAnswer:
    literal: tuple[str, ...]
    pragmatic: tuple[str, ...]
    answer: str


def _clean(text: str) -> str:
    # A tag inside a span would end it early when read back.
    return " ".join(_SPLIT.sub(" ", text).split())


def format_answer(literal: Sequence[str], pragmatic: Sequence[str], answer: str) -> str:
    parts = [f"{_clean(s)} {LIT}" for s in literal] + [f"{_clean(s)} {PRAG}" for s in pragmatic]
    return " ".join([*parts, _clean(answer)]).strip()


def parse_answer(text: str) -> ParsedAnswer:
    pieces = _SPLIT.split(text)
    spans: dict[str, list[str]] = {LIT: [], PRAG: []}
    for segment, tag in zip(pieces[0::2], pieces[1::2], strict=False):
        segment = " ".join(segment.split())
        if segment:
            spans[tag].append(segment)
    return ParsedAnswer(tuple(spans[LIT]), tuple(spans[PRAG]), " ".join(pieces[-1].split()))


def well_formed(text: str) -> bool:
    """Whether an output follows the target's format, in the target's order: one or more literal spans each
    closed by `</lit>`, then any pragmatic spans each closed by `</prag>` (some gold targets have none), then
    a non-empty final answer. An output that closes a literal span after a pragmatic one, or has an empty span
    or no answer, is not (a reader looping "x </lit> y </prag> x </lit> ..." to the token limit is read, but
    is not in the format). `parse_answer` still reads every output, well-formed or not."""
    pieces = _SPLIT.split(text)
    tags, segments = pieces[1::2], pieces[0::2]
    in_order = tags == sorted(tags, key=TAGS.index)  # every </lit> before the first </prag>
    return bool(tags) and tags[0] == LIT and in_order and all(segment.strip() for segment in segments)
