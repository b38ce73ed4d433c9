"""Reading generated text back: the option a reply gives (generation-then-parsing scoring: `read_answer`,
whose rules live in `answers`: an answer is read, or it is none), ToMATO's authors' reading, a reply after a
model's reasoning marker, a two-way judge's answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pragexp.prompting.answers import Forms, opening_option, parse_option, plain, read_answer, read_declared
from pragexp.prompting.templates import letter

__all__ = ["READERS", "extract_reply", "parse_choice", "parse_option", "read_answer", "read_first_bracketed"]

# A judge's verdicts on a reply, and the task's mark of a generation that held no reply (never a judge's).
TRUE, LITERAL, NEITHER, INVALID = "true", "literal", "neither", "invalid"
NO_REPLY = "no_reply"


def read_first_bracketed(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """ToMATO's authors' reading (their run_local_llm.py): the option whose letter, in square brackets, comes
    first anywhere in the reply, upper case only; their pattern's class also holds a comma, so a first "[,]"
    names no option (wrong there, unparsed here). None: no such bracket."""
    letters = [letter(i) for i in range(len(continuations))]
    found = re.search(r"\[([" + re.escape("".join(letters)) + r",])\]", reply)
    return letters.index(found.group(1)) if found and found.group(1) in letters else None


# How a template's replies are read back (`PromptTemplate.reader`).
READERS = {"declared": read_answer, "first_bracketed": read_first_bracketed}


def extract_reply(text: str, marker: str | None = None, speaker: str = "") -> str:
    """The reply in a generation: after the last `marker` (a template's `reply_marker`, "Response:", matched
    without regard to case or the space before its colon) for a template that has the model reason first, then
    cut at the first blank line, without a leading "<speaker> replies," (or responds, says) and the quotes
    around it.

    "" when there is no reply: a reasoning template's generation without its marker (the text is the model's
    reasoning, not a reply: reading it as one would score the thought), or nothing left after the marker or
    the prefix."""
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


# A judge's answers (Yerukola et al.'s A.4 prompt: "The answer options are 1 or 2 or 'neither'"), as forms.
_JUDGE_FORMS = Forms.named(
    [("1", 0), ("option 1", 0), ("2", 1), ("option 2", 1)]
    + [
        (f, 2)
        for f in (
            "neither",
            "none",
            "neither of them",
            "none of them",
            "none of the options",
            "neither option",
        )
    ]
)


def parse_choice(text: str) -> str | None:
    """A two-way judge's answer (Yerukola et al.'s A.4 prompt): "1", "2", "neither", or None when it gives
    none of these, read by the rules every reply is read by (`answers`): "1", "(2)", "Option 2", "Answer: 1",
    "I pick 2", "The answer is option 1 because ...", "Neither of them."; "1 or 2", "I cannot tell", a digit
    somewhere in a sentence: None."""
    text = plain(text or "")
    if not text.strip():
        return None
    declared = read_declared(text, _JUDGE_FORMS)
    if declared is None:
        opening = opening_option(text.strip().split("\n", 1)[0], _JUDGE_FORMS)
        declared = opening.option if opening is not None else None
    return ("1", "2", "neither")[declared] if isinstance(declared, int) else None
