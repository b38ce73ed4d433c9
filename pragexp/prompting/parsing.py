"""Reading a generated answer back into one of the options (generation-then-parsing scoring)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_NON_WORD = re.compile(r"[^a-z0-9]+")


def _norm(text: str) -> str:
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def parse_option(reply: str, options: Sequence[str]) -> int | None:
    """The option a reply names, or None (unparsable: scored as wrong and counted).

    Compared lower-cased, punctuation ignored, on the reply's first non-empty line: first an exact match
    with an option; else the longest option the line starts with (as a whole word sequence: "yes, subject
    to some conditions" wins over "yes"); else None. Anything cleverer (an option mentioned mid-sentence)
    would guess for the model."""
    line = next((ln for ln in reply.splitlines() if ln.strip()), "")
    said = _norm(line)
    normalized = [_norm(o) for o in options]
    for i, option in enumerate(normalized):
        if option and said == option:
            return i
    best = None
    for i, option in enumerate(normalized):
        if option and (said + " ").startswith(option + " "):
            if best is None or len(option) > len(normalized[best]):
                best = i
    return best
