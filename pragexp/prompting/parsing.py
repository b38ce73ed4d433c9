"""Reading generated text back: an option named by a reply (generation-then-parsing scoring), a reply after a
model's reasoning, a judge's answer."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pragexp.prompting.templates import letter

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


# A declaration of the answer: "Answer: B", "the final answer is 2", "the answer to the question is: A", "I choose
# yes"; "Option (A)" is not one (it names an option, it does not declare it). The value runs to the end of its line.
_DECLARATION = re.compile(
    r"(?:\b(?:final\s+)?answer(?:\s+to\s+[^.:\n]{1,80}?(?=\s*(?:\bis\b|:)))?\s*(?:is|would\s+be|will\s+be)?\s*[:=]?"
    r"|\bI\s+(?:choose|pick|select|go\s+with))"
    r"[ \t]*\**[ \t]*(?=([^\n]*))",  # a lookahead: the next declaration may lie inside this value
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm)\{([^{}]*)\}")


def read_answer(reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()) -> int | None:
    """The option a free reply (its reasoning already cut) declares, read as the field reads answers: the LAST
    declaration wins ("Answer: A ... wait, the answer is B" is B), a declaration being `\\boxed{...}`, "answer:",
    "the answer is", "I choose"; its value names an option by the form the template asked for (`continuations`:
    a letter, a number, the option's words) or by the option's own words (`option_texts`). Without any
    declaration, a reply that is an option (`parse_option`), or that names exactly one option among its words.
    None: nothing readable (counted as `unparsed`)."""
    forms = [(_norm(c), i) for i, c in enumerate(continuations)]
    forms += [(_norm(t), i) for i, t in enumerate(option_texts)]
    forms = [(f, i) for f, i in forms if f]
    declared = [(m.start(), m.group(1)) for m in _DECLARATION.finditer(reply)]
    declared += [(m.start(), _TEXT_COMMAND.sub(r"\1", m.group(1))) for m in _BOXED.finditer(reply)]
    for _, value in sorted(declared, key=lambda d: d[0], reverse=True):
        choice = _named(value, forms)
        if choice is not None:
            return choice
    plain = parse_option(reply, continuations)
    if plain is not None:
        return plain
    said = f" {_norm(reply)} "
    mentioned = {i for form, i in forms if len(form) > 1 and f" {form} " in said}
    return mentioned.pop() if len(mentioned) == 1 else None


def read_first_bracketed(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """ToMATO's authors' reading (their run_local_llm.py): the option whose letter, in square brackets, comes first
    anywhere in the reply, upper case only; their pattern's class also holds a comma, so a first "[,]" names no
    option (wrong there, unparsed here). None: no such bracket."""
    letters = [letter(i) for i in range(len(continuations))]
    found = re.search(r"\[([" + re.escape("".join(letters)) + r",])\]", reply)
    return letters.index(found.group(1)) if found and found.group(1) in letters else None


# How a template's replies are read back (`PromptTemplate.reader`).
READERS = {"declared": read_answer, "first_bracketed": read_first_bracketed}


def _named(value: str, forms: list[tuple[str, int]]) -> int | None:
    """The option a declaration's value names: the value is a form, or starts with one (the longest wins)."""
    said = _norm(value)
    if not said:
        return None
    exact = {i for form, i in forms if said == form}
    if len(exact) == 1:
        return exact.pop()
    starts = [(len(form), i) for form, i in forms if (said + " ").startswith(form + " ")]
    if not starts:
        return None
    longest = max(n for n, _ in starts)
    best = {i for n, i in starts if n == longest}
    return best.pop() if len(best) == 1 else None


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
