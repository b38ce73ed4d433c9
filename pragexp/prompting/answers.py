"""Reading the answer of a free reply (its reasoning already cut): the option the reply clearly gives, or None.
Reading never guesses: a word that names an option somewhere in a reply is not an answer.

An option is named by a *form*: the continuation the template asked for (a letter, a number, the option's words),
the option's own words, or a letter followed by its option's words ("A. Incoherent"). Compared without regard to
case, punctuation, markdown or LaTeX's text commands. A form names its option only where it stands alone: at the
start of the text read (after quotes, brackets, bullets) and ending where a word ends: the end of the text,
punctuation other than "?" (a question asks, it does not answer), or "because"/"since"/"as". "No comment",
"Yes and no", "A or B", "maybe yes" name none; "No.", "(B)", "yes, subject to some conditions" do (the longest
form wins; where a longer form of another option begins the same way but does not stand alone, none).

The rules, in order (`read_answer`):
1. **Declarations**, the field's way of reading answers: "Answer: B", "the (final) answer is 2", "the answer to the
   question is A", "I choose / pick / go with / would say yes", "the reply means / implies no", and `\\boxed{...}`.
   Each declaration's value (the rest of its line, or the next line when its line ends there) is read as one of:
   an option (a form stands alone at its start); a *non-answer* (it opens with a negation or a hedge: "not yes",
   "isn't A", "unclear", "maybe", "both", "neither", "it depends"; or two options joined: "yes or no"; or the
   declaration is negated before it in its clause: "I don't think the answer is A"); *cut* (an empty value at the
   end of the reply: the reply stopped while declaring); or nothing (any other value: "the answer is based on the
   story"), which is skipped. **The last declaration that is not skipped decides**: a correction wins ("Answer: A
   ... wait, the answer is B" is B), several `\\boxed{}` are read as lm-evaluation-harness's `last_boxed_only_string`
   (its MATH and GPQA utilities) reads them, the last one; a non-answer or a cut declaration last gives None. Two
   last options joined by "or"/"and" ("\\boxed{A} or \\boxed{B}") and a retraction after the last ("Answer: A.
   Wait, that's wrong") give None.
2. Without a deciding declaration, **a reply that is an option** (`parse_option`): its first non-empty line opens
   with a form standing alone ("No.", "B", "A. Incoherent", "Yes, he will"), no later sentence opens with another
   option ("No. Yes, he will" changes its mind: None), and the reply holds no hedge or refusal anywhere ("I'm not
   sure", "it depends", "hard to say", "no idea", "I'm sorry", "as an AI", "maybe", "both", "neither", with the
   options' own words taken out first, so Circa's "neither yes nor no" stays an option), nor two options joined
   anywhere ("No, the response does not imply yes or no").
3. Nothing else: None (`unparsed`, scored wrong). What `prompt.extractor` recovers is counted apart (`extracted`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NON_ANSWER, CUT = "non-answer", "cut"  # verdicts of a declaration that decide "no answer"

_NON_WORD = re.compile(r"[^a-z0-9]+")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox)\{([^{}]*)\}")
_MARKUP = re.compile(r"[*`#$]+|(?<!\w)_+|_+(?!\w)")  # markdown emphasis, code, headings; math delimiters
# Where a form ends when it stands alone: the end, punctuation (not "?"), or a reason that follows it.
_STANDS_ALONE = re.compile(
    r"(?=\s*(?:$|[.,;:!)\]}>\"/\\\u201d]|['\u2019](?![a-z])|-\s|\u2013|\u2014)|\s+(?:because|since|as)\b)",
    re.IGNORECASE,
)
_QUOTES = "\\s\"'\u201c\u201d\u2018\u2019("
_JOINED = re.compile(
    rf"[{_QUOTES}]*(?:(?:,|/|&|\+|\bor\b|\band\b|\bnor\b|\bbut\b|\bvs\b\.?|\bversus\b)[{_QUOTES}]*)+",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|not\s+(?:sure|certain|clear|enough)|unsure|uncertain|unclear|ambiguous"
    r"|(?:don'?t|do\s+not|does\s+not|doesn'?t)\s+know|no\s+(?:idea|comment|way\s+to\s+(?:tell|know))"
    r"|(?:can'?t|cannot|can\s+not|unable\s+to)\s+(?:tell|say|know|determine|answer|decide|be\s+(?:sure|determined))"
    r"|impossible\s+to|hard\s+to\s+(?:say|tell)|difficult\s+to\s+(?:say|tell)|it\s+depends|depends\s+on"
    r"|seems?|appears?\s+to|or\s+so|either|both|neither|i'?m\s+sorry|i\s+am\s+sorry|as\s+an\s+ai|language\s+model|not\s+enough\s+information"
    r"|insufficient|i\s+(?:can'?t|cannot)\s+(?:help|provide|answer))\b",
    re.IGNORECASE,
)
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
    r"|\b(?:means|implies|meant|meaning)\b(?:\s+that)?\s*:?)"
    r"[ \t]*(?=([^\n]*))",  # a lookahead: the next declaration may lie inside this value
    re.IGNORECASE,
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\{((?:[^{}]|\{[^{}]*\})*)\}")
_NOT = re.compile(r"[\W_]*not\s+(?:just\s+|only\s+|simply\s+)?", re.IGNORECASE)
_BUT = re.compile(r"[\W_]*\bbut\b(?:\s+rather)?[\W_]*", re.IGNORECASE)
# A declaration inside a question or a condition ("whether the response implies yes") declares nothing.
_EMBEDDED = re.compile(r"\b(?:whether|if)\b", re.IGNORECASE)
# What follows an option that answers the user, not the question ("Yes, I can help with that").
_ACKNOWLEDGING = re.compile(
    r"[\W_]*(?:i\s+(?:can|could|would|will|'d|'ll)\s+(?:help|assist|be\s+(?:happy|glad))|i\s+(?:understand|see)\b"
    r"|i'?m\s+(?:ready|happy|glad|here)|i\s+am\s+(?:ready|happy|glad|here)|here\s+(?:is|are|'s)|let\s+me"
    r"|of\s+course|sure|certainly|absolutely)",
    re.IGNORECASE,
)
_NEGATED = re.compile(r"\b(?:not|never|hardly|doubt)\b|n't\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[.!?;\n]|\bbut\b|\bhowever\b", re.IGNORECASE)
_RETRACTION = re.compile(
    r"\b(?:wait|hold\s+on|on\s+second\s+thought|scratch\s+that|i\s+was\s+wrong|(?:that'?s|that\s+is|that\s+was)"
    r"\s+(?:wrong|incorrect|not\s+right)|my\s+mistake|let\s+me\s+re-?(?:consider|think)|reconsider)\b",
    re.IGNORECASE,
)
_INTERJECTION = re.compile(
    r"[\W_]*(?:(?:wait|actually|oh|hmm+|sorry|so|well|i\s+mean|no\s+wait)\b[\W_]*)*", re.I
)


def norm(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def plain(text: str) -> str:
    """The text without markdown and math delimiters, LaTeX text commands unwrapped (\\boxed kept)."""
    return _MARKUP.sub("", _TEXT_COMMAND.sub(r"\1", text))


@dataclass(frozen=True)
class Forms:
    """The forms that name the options: (pattern, normalised words, option), the longest first."""

    entries: tuple[tuple[re.Pattern, str, int], ...]

    @classmethod
    def of(cls, continuations: Sequence[str], option_texts: Sequence[str] = ()) -> Forms:
        """The continuations and the options' own words of each option, and each letter or number followed by
        its option's words; a form that would name two options names none."""
        pairs = [*enumerate(continuations), *enumerate(option_texts)]
        for i, (c, t) in enumerate(zip(continuations, option_texts, strict=False)):
            if len(norm(c)) <= 2 and norm(t):  # a letter or number followed by its option's words
                pairs.append((i, f"{c} {t}"))
        return cls.named((form, i) for i, form in pairs)

    @classmethod
    def named(cls, pairs: Iterable[tuple[str, int]]) -> Forms:
        """Forms from (words, option) pairs."""
        options: dict[str, set[int]] = {}
        for form, i in pairs:
            options.setdefault(norm(form), set()).add(i)
        unique = [(words, named.pop()) for words, named in options.items() if words and len(named) == 1]
        unique.sort(key=lambda wo: -len(wo[0]))
        return cls(tuple((_form_pattern(w), w, i) for w, i in unique))

    def masked(self, text: str) -> str:
        """`text` without the options' own words that hold a hedge word ("neither yes nor no" is an option)."""
        for pattern, words, _ in self.entries:
            if _HEDGE.search(words):
                text = pattern.sub(" ", text)
        return text


def _form_pattern(words: str) -> re.Pattern:
    return re.compile(r"(?<![a-z0-9])" + r"[\W_]+".join(map(re.escape, words.split())), re.IGNORECASE)


@dataclass(frozen=True)
class Opening:
    option: int | str  # the option, or NON_ANSWER (two options joined)
    end: int  # where its form ends in the text


def opening_option(text: str, forms: Forms) -> Opening | None:
    """The option `text` opens with (after punctuation, quotes, bullets), its form standing alone (module
    docstring); None when no form stands alone there, or when a longer form of another option begins there."""
    start = re.match(r"[\W_]*", text).end()
    longer_other: set[int] = set()
    for pattern, _, option in forms.entries:
        found = pattern.match(text, start)
        if not found:
            continue
        if not _STANDS_ALONE.match(text, found.end()):
            longer_other.add(option)
            continue
        if longer_other - {option}:
            return None
        joined = _JOINED.match(text, found.end())
        if joined:
            other = opening_option(text[joined.end() :], forms)
            if other is not None and other.option != option:
                return Opening(NON_ANSWER, found.end())
        return Opening(option, found.end())
    return None


@dataclass(frozen=True)
class Declaration:
    start: int  # where the declaration starts in the text
    verdict: int | str | None  # an option, NON_ANSWER, CUT, or None (a value that says nothing: skipped)
    end: int  # where what decides it ends (the option's form; else the value's end)


def declarations(text: str, forms: Forms) -> list[Declaration]:
    """Every declaration in `text` with its verdict, in order of position."""
    found = []
    for m in _DECLARATION.finditer(text):
        value, at = m.group(1), m.end()
        if not value.strip():
            following = re.match(r"[ \t]*\n\s*([^\n]+)", text[at:])
            if following is None:
                found.append(Declaration(m.start(), CUT if not text[at:].strip() else None, len(text)))
                continue
            value, at = following.group(1), at + following.start(1)
        found.append(_judged(text, m.start(), value, at, forms))
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
    opening = opening_option(value, forms)
    if opening is not None:
        return Declaration(start, opening.option, boxed_end or at + opening.end)
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
    deciding = [d for d in declarations(text, forms) if d.verdict is not None]
    if not deciding:
        return None
    last = deciding[-1]
    if not isinstance(last.verdict, int):
        return NON_ANSWER
    if _RETRACTION.search(text[last.end :]):
        return NON_ANSWER
    if len(deciding) > 1:
        before = deciding[-2]
        between = text[before.end : last.start]
        if isinstance(before.verdict, int) and before.verdict != last.verdict and _JOINED.fullmatch(between):
            return NON_ANSWER
    return last.verdict


def joins_two_options(text: str, forms: Forms) -> bool:
    """Whether `text` anywhere names two options joined ("does not imply yes or no", "A and C are wrong")."""
    for pattern, _, option in forms.entries:
        for found in pattern.finditer(text):
            joined = _JOINED.match(text, found.end())
            other = opening_option(text[joined.end() :], forms) if joined else None
            if other is not None and other.option not in (option, NON_ANSWER):
                return True
    return False


def read_opening(text: str, forms: Forms) -> int | None:
    """Rule 2 (module docstring): the option a reply is."""
    if _HEDGE.search(forms.masked(text)) or joins_two_options(forms.masked(text), forms):
        return None
    lines = text.strip().split("\n", 1)
    first = opening_option(lines[0], forms)
    if first is None or not isinstance(first.option, int) or _ACKNOWLEDGING.match(lines[0], first.end):
        return None
    rest = lines[0][first.end :] + ("\n" + lines[1] if len(lines) > 1 else "")
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", rest):
        sentence = sentence[_INTERJECTION.match(sentence).end() :]
        later = opening_option(sentence, forms) if sentence else None
        if later is not None and later.option != first.option:
            return None
    return first.option


def read_answer(reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()) -> int | None:
    """The option a free reply gives, by the rules of the module docstring (declarations, the last deciding; else
    a reply that is an option); None where it gives none: counted as `unparsed`."""
    text = plain(reply or "")
    if not text.strip():
        return None
    forms = Forms.of(continuations, option_texts)
    declared = read_declared(text, forms)
    if declared is not None:
        return declared if isinstance(declared, int) else None
    return read_opening(text, forms)


def parse_option(reply: str, options: Sequence[str]) -> int | None:
    """The option a reply is (rule 2 of the module docstring: its first line opens with an option standing alone,
    the longest, without a hedge or a change of mind), or None."""
    text = plain(reply or "")
    return read_opening(text, Forms.of(options)) if text.strip() else None
