"""Reading generated text back: an option named by a reply (generation-then-parsing scoring), a reply after a
model's reasoning, a judge's answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

# A judge's verdicts on a reply, and the task's mark of a generation that held no reply (never a judge's).
TRUE, LITERAL, NEITHER, INVALID = "true", "literal", "neither", "invalid"
NO_REPLY = "no_reply"

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


def extract_reply(text: str, marker: str | None = None, speaker: str = "") -> str:
    """The reply in a generation: after the last `marker` (a template's `reply_marker`, "Response:", matched
    without regard to case or the space before its colon) for a template that has the model reason first, then
    cut at the first blank line, without a leading "<speaker> replies," (or responds, says) and the quotes
    around it.

    "" when there is no reply: a reasoning template's generation without its marker (the text is the model's
    reasoning, not a reply: reading it as one would score the thought), or nothing left after the marker or the
    prefix."""
    text = text.strip()
    if marker:
        colon = marker.rstrip().endswith(":")
        pattern = re.escape(marker.rstrip().rstrip(":").strip()) + (r"\s*:" if colon else "")
        marks = list(re.finditer(pattern, text, flags=re.IGNORECASE))
        if not marks:
            return ""
        text = text[marks[-1].end() :].strip()
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0].strip()
    if speaker:
        text = re.sub(rf"^{re.escape(speaker)}\s+(replies|responds|says)\s*,?\s*", "", text, flags=re.I)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


_NEITHER = re.compile(r"\b(neither|none)\b", re.IGNORECASE)
_OPTION_WORD = re.compile(r"(?:option|answer)\s*(?:number|no\.?|#)?\s*[:(]?\s*([12])\b", re.IGNORECASE)
_DIGIT = re.compile(r"(?<![\d.])([12])(?![\d])")


def parse_choice(text: str) -> str | None:
    """A two-way judge's answer (Yerukola et al.'s A.4 prompt): "1", "2", "neither", or None when it says none
    of these. Read leniently: a leading digit, "option 2", "Answer: 1", "neither"/"none", or a lone 1 or 2."""
    text = (text or "").strip()
    if not text:
        return None
    head = re.match(r"^\W*([12])(?!\d)(?!\s*(?:or|and|/|,)\s*[12])", text)
    if head:
        return head.group(1)
    option = _OPTION_WORD.search(text)
    if option:
        return option.group(1)
    if _NEITHER.search(text):
        return "neither"
    digits = set(_DIGIT.findall(text))
    return digits.pop() if len(digits) == 1 else None
