"""A reply's reasoning kept apart from its answer: what a thinking model writes between its markers (`<think>`
and `</think>` by default, `prompt.reasoning_markers`) is cut before the answer is read.

- A reply that opens no reasoning block has none: all of it is the answer.
- A block that the prompt opened (a chat template that ends with `<think>`, as DeepSeek-R1's does) or that has
  an end marker without a start (a template that wrote the start): the reply reasons from its first character.
- Everything up to the last end marker is reasoning (a model that closes twice answers after the last), the
  rest the answer.
- A block that never closes is no answer (`closed` false): its text is thought, and reading it as an answer
  would score whatever option the model weighed last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MARKERS = ("<think>", "</think>")


@dataclass(frozen=True)
class Split:
    reasoning: str | None  # None: the reply opened no reasoning block
    answer: str | None  # None: the block never closed (no answer)

    @property
    def closed(self) -> bool:
        return self.answer is not None


def check_markers(markers: Sequence[str]) -> tuple[str, str]:
    markers = tuple(str(m) for m in markers)
    if len(markers) != 2 or not all(markers) or markers[0] == markers[1]:
        raise ValueError(
            f"prompt.reasoning_markers={list(markers)}: give two different markers, [start, end]"
        )
    return markers  # type: ignore[return-value]


def opens_reasoning(prompt: str, markers: Sequence[str] = DEFAULT_MARKERS) -> bool:
    """Whether a prompt ends inside a reasoning block (its template opened one for the model)."""
    start, end = markers
    return prompt.rfind(start) > prompt.rfind(end)


def split_reasoning(reply: str, markers: Sequence[str] = DEFAULT_MARKERS, opened: bool = False) -> Split:
    """The reasoning and the answer of `reply`; `opened`: the prompt opened the block (`opens_reasoning`)."""
    start, end = markers
    first_start, last_end = reply.find(start), reply.rfind(end)
    if opened or (last_end >= 0 and not 0 <= first_start < last_end):
        begin = 0  # the reasoning began before the reply did
    elif first_start >= 0:
        begin = first_start + len(start)
    else:
        return Split(None, reply.strip())
    if last_end < 0:
        return Split(_thought(reply[begin:], markers), None)
    return Split(_thought(reply[begin:last_end], markers), reply[last_end + len(end) :].strip())


def _thought(text: str, markers: Sequence[str]) -> str:
    """The reasoning's text, without the markers of any block inside it."""
    for marker in markers:
        text = text.replace(marker, "")
    return text.strip()
