"""Rule 1 of reading a reply (`answers`' docstring): declarations ("Answer: B", "the answer is 2", "I choose
yes", `\\boxed{...}`), each with its verdict, and the last one that decides."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from pragexp.prompting.answer_forms import CUT, JOINED, NON_ANSWER, UNSURE_RE, Forms, Opening, opening_option

# A declaration's value that says there is no answer, or hedges: read as such, never as the option after it.
_REFUSING_VALUE = re.compile(
    r"[\W_]*(?:not\b|n'?t\b|isn'?t|is\s+not|wasn'?t|was\s+not|would\s*n'?t|would\s+not|won'?t|will\s+not"
    r"|cannot|can'?t|can\s+not|could\s+be|might|may\s+be|neither|none|nor\b|no\s+(?:answer|option|one|clear"
    r"|single|correct|right|definitive)|unclear|uncertain|unknown|ambiguous|undetermined|indeterminate|maybe"
    r"|perhaps|possibly|probably|likely|unlikely|either|both|it\s+depends|depends|hard|difficult|impossible"
    r"|i\s+(?:don'?t|do\s+not|can'?t|cannot|am\s+not|'m\s+not)|n/?a\b|unanswerable|missing|unsure)",
    re.IGNORECASE,
)
_QUOTED = r'"[^"\n]*"|\u201c[^\u201d\n]*\u201d'  # a quoted question, read as one stretch
_DECLARATION = re.compile(
    r"(?:\b(?:final\s+|correct\s+|best\s+|right\s+)?answer\b"
    rf"(?:\s+to\s+(?:[^.:\n\"\u201c]|{_QUOTED}){{1,120}}?(?=\s*(?:\bis\b|:)))?"
    r"\s*(?:\bis\b|\bwould\s+be\b|\bwill\s+be\b|\bshould\s+be\b)?\s*[:=]?"
    r"|\bI(?:\s+would|\s+will|'d|'ll)?\s+(?:choose|pick|select|go\s+with|opt\s+for|say)\b\s*:?"
    r"|\b(?:(?P<meaning>means|implies|meant|meaning)|conveys?|conveyed)\b(?:\s+that)?\s*:?)"
    r"[ \t]*(?=(?P<value>[^\n]*))",  # a lookahead: the next declaration may lie inside this value
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\{((?:[^{}]|\{[^{}]*\})*)\}")
_OPTION_WORD = re.compile(r"[\W_]*(?:option|choice)\s+(?=\W*[a-z0-9]{1,2}\b)", re.IGNORECASE)
_NOT = re.compile(r"[\W_]*not\s+(?:just\s+|only\s+|simply\s+)?", re.IGNORECASE)
_BUT = re.compile(r"[\W_]*\bbut\b(?:\s+rather)?[\W_]*", re.IGNORECASE)
# A declaration inside a question or a condition ("whether the response implies yes") declares nothing.
_EMBEDDED = re.compile(r"\b(?:whether|if)\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(?:not|never|hardly|doubt)\b|n't\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[.!?;\n]|\bbut\b|\bhowever\b", re.IGNORECASE)
_RETRACTION = re.compile(
    r"\b(?:wait|hold\s+on|on\s+second\s+thought|scratch\s+that|i\s+was\s+wrong|(?:that'?s|that\s+is|that\s+was)"
    r"\s+(?:wrong|incorrect|not\s+right)|my\s+mistake|let\s+me\s+re-?(?:consider|think)|reconsider)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Declaration:
    start: int  # where the declaration starts in the text
    verdict: int | str | None  # an option, NON_ANSWER, CUT, or None (a value that says nothing: skipped)
    end: int  # where what decides it ends (the option's form; else the value's end)
    meaning: bool = False  # "the reply means / implies / conveys ...": it says what something means


def declarations(text: str, forms: Forms) -> list[Declaration]:
    """Every declaration in `text` with its verdict, in order of position."""
    found = []
    for m in _DECLARATION.finditer(text):
        value, at = m.group("value"), m.end()
        if not value.strip():
            following = re.match(r"[ \t]*\n\s*([^\n]+)", text[at:])
            if following is None:
                found.append(Declaration(m.start(), CUT if not text[at:].strip() else None, len(text)))
                continue
            value, at = following.group(1), at + following.start(1)
        judged = _judged(text, m.start(), value, at, forms)
        found.append(replace(judged, meaning=bool(m.group("meaning"))))
    for m in _BOXED.finditer(text):
        found.append(_judged(text, m.start(), m.group(1), m.start(1), forms, boxed_end=m.end()))
    return sorted(found, key=lambda d: d.start)


def _judged(text, start, value, at, forms, boxed_end: int | None = None) -> Declaration:
    clause = text[:start].rsplit("\n", 1)[-1]
    clause = _CLAUSE_START.split(clause)[-1]
    if _NEGATED.search(clause):
        return Declaration(start, NON_ANSWER, at + len(value))
    if _EMBEDDED.search(clause):
        return Declaration(start, None, at + len(value))
    named = _OPTION_WORD.match(value)  # "the answer is option D": the value is what follows "option"
    if named:
        value, at = value[named.end() :], at + named.end()
    opening = opening_option(value, forms)
    if opening is not None:
        sentence = re.split(r"(?<=[.!?])\s|\n", value[opening.end :], maxsplit=1)[0]
        doubted = UNSURE_RE.search(forms.masked(sentence))
        return Declaration(start, NON_ANSWER if doubted else opening.option, boxed_end or at + opening.end)
    contrast = _contrasted(value, forms)
    if contrast is not None:
        return Declaration(start, contrast.option, boxed_end or at + contrast.end)
    if _REFUSING_VALUE.match(value):
        return Declaration(start, NON_ANSWER, at + len(value))
    return Declaration(start, None, at + len(value))


def _contrasted(value: str, forms: Forms) -> Opening | None:
    """The option of a value "not <an option> but <another>" (the second), or None."""
    negation = _NOT.match(value)
    if negation is None:
        return None
    for pattern, _, denied in forms.entries:
        found = pattern.match(value, negation.end() + re.match(r"[\W_]*", value[negation.end() :]).end())
        but = _BUT.match(value, found.end()) if found else None
        if but:
            given = opening_option(value[but.end() :], forms)
            if given is None or given.option in (denied, NON_ANSWER):
                return None
            return Opening(given.option, but.end() + given.end)
    return None


def read_declared(text: str, forms: Forms) -> int | str | None:
    """Rule 1 (module docstring): the option the last deciding declaration gives, NON_ANSWER where it decides
    that there is none, None where no declaration decides."""
    found = declarations(text, forms)
    deciding = [d for d in found if d.verdict is not None]
    if not deciding:
        # "No, the reply means <words of its own>": it says what it means, and that is no option
        return NON_ANSWER if any(d.meaning for d in found) else None
    last = deciding[-1]
    if not isinstance(last.verdict, int):
        return NON_ANSWER
    if _RETRACTION.search(text[last.end :]):
        return NON_ANSWER
    if len(deciding) > 1:
        before = deciding[-2]
        between = text[before.end : last.start]
        if isinstance(before.verdict, int) and before.verdict != last.verdict and JOINED.fullmatch(between):
            return NON_ANSWER
    return last.verdict
