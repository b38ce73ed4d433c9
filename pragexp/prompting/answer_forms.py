"""What names an option in a free reply, and where it stands alone: the pieces `answers` and `declarations`
read replies with (their rules are in `answers`' docstring)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

NON_ANSWER, CUT = "non-answer", "cut"  # verdicts that decide "no answer"
_MARKER = re.compile(r"(\d{1,2}|[A-Za-z])[.)]\s+")  # "2) ", "B. ": a list marker

NON_WORD = re.compile(r"[^a-z0-9]+")
LABEL = re.compile(r"[a-z]|\d{1,2}")  # a form that is an option's letter or number
TEXT_COMMAND = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox)\{([^{}]*)\}")
MARKUP = re.compile(r"[*`#$]+|(?<!\w)_+|_+(?!\w)")  # markdown emphasis, code, headings; math delimiters
# Where a form ends when it stands alone: the end, punctuation (not "?"), or a reason that follows it.
STANDS_ALONE = re.compile(
    r"(?=\s*(?:$|[.,;:!)\]}>\"/\\\u201d]|['\u2019](?![a-z])|-\s|\u2013|\u2014)|\s+(?:because|since|as)\b)",
    re.IGNORECASE,
)
QUOTES = "\\s\"'\u201c\u201d\u2018\u2019("
JOINED = re.compile(
    rf"[{QUOTES}]*(?:(?:,|/|&|\+|\bor\b|\band\b|\bnor\b|\bbut\b|\bvs\b\.?|\bversus\b)[{QUOTES}]*)+",
    re.IGNORECASE,
)
# Doubt about the answer itself: a declared option hedged so in its own sentence is no answer ("yes, maybe").
UNSURE = (
    r"maybe|perhaps|possibly|probably|unsure|uncertain|not\s+(?:entirely\s+|quite\s+|completely\s+|really\s+|100%\s+)?"
    r"(?:sure|certain)|not\s+exactly|not\s+really|sort\s+of|kind\s+of|i\s+guess|(?:don'?t|do\s+not)\s+know"
)
UNSURE_RE = re.compile(rf"\b(?:{UNSURE})\b", re.IGNORECASE)
HEDGE = re.compile(
    rf"\b(?:{UNSURE}|not\s+(?:clear|enough)|unclear|ambiguous|(?:it'?s|it\s+is)\s+possible"
    r"|(?:don'?t|do\s+not|does\s+not|doesn'?t)\s+know|no\s+(?:idea|comment|way\s+to\s+(?:tell|know))"
    r"|(?:can'?t|cannot|can\s+not|unable\s+to)\s+(?:tell|say|know|determine|answer|decide|be\s+(?:sure|determined))"
    r"|impossible\s+to|hard\s+to\s+(?:say|tell)|difficult\s+to\s+(?:say|tell)|it\s+depends|depends\s+on"
    r"|seems?|appears?\s+to|or\s+so|either|both|neither|i'?m\s+sorry|i\s+am\s+sorry|as\s+an\s+ai|language\s+model|not\s+enough\s+information"
    r"|insufficient|i\s+(?:can'?t|cannot)\s+(?:help|provide|answer))\b",
    re.IGNORECASE,
)


def norm(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space."""
    return " ".join(NON_WORD.sub(" ", text.lower()).split())


def plain(text: str) -> str:
    """The text without markdown and math delimiters, LaTeX text commands unwrapped (\\boxed kept)."""
    return MARKUP.sub("", TEXT_COMMAND.sub(r"\1", text))


@dataclass(frozen=True)
class Forms:
    """The forms that name the options: (pattern, normalised words, option), the longest first."""

    entries: tuple[tuple[re.Pattern, str, int], ...]
    words: tuple[tuple[int, str], ...] = ()  # each option's own words, normalised (not its letter or number)

    @classmethod
    @functools.lru_cache(maxsize=1024)  # noqa: B019 (a class method: the cache holds no instance)
    def of(cls, continuations: tuple[str, ...], option_texts: tuple[str, ...] = ()) -> Forms:
        """The continuations and the options' own words of each option, and each letter or number followed by
        its option's words; a form that would name two options names none."""
        pairs = [*enumerate(continuations), *enumerate(option_texts)]
        for i, c in enumerate(continuations):
            if LABEL.fullmatch(norm(c)) and i < len(option_texts) and norm(option_texts[i]):
                pairs.append((i, f"{c} {option_texts[i]}"))
        own = [(i, norm(w)) for i, w in [*enumerate(continuations), *enumerate(option_texts)]]
        return cls.named(
            ((form, i) for i, form in pairs), [(i, w) for i, w in own if w and not LABEL.fullmatch(w)]
        )

    @classmethod
    def named(cls, pairs: Iterable[tuple[str, int]], words: Sequence[tuple[int, str]] = ()) -> Forms:
        """Forms from (words, option) pairs."""
        options: dict[str, set[int]] = {}
        for form, i in pairs:
            options.setdefault(norm(form), set()).add(i)
        unique = [(words, named.pop()) for words, named in options.items() if words and len(named) == 1]
        unique.sort(key=lambda wo: -len(wo[0]))
        return cls(tuple((_form_pattern(w), w, i) for w, i in unique), tuple(words))

    def masked(self, text: str) -> str:
        """`text` without the options' own words that hold a hedge word ("neither yes nor no" is an
        option)."""
        for pattern, words, _ in self.entries:
            if HEDGE.search(words):
                text = pattern.sub(" ", text)
        return text


@functools.lru_cache(maxsize=4096)
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
    for pattern, words, option in forms.entries:
        found = pattern.match(text, start)
        if not found:
            continue
        if not STANDS_ALONE.match(text, found.end()):
            longer_other.add(option)
            continue
        if longer_other - {option}:
            return None
        joined = JOINED.match(text, found.end())
        other = opening_option(text[joined.end() :], forms) if joined else None
        if other is not None and other.option != option:
            return Opening(NON_ANSWER, found.end())
        if LABEL.fullmatch(words) and _words_of_another(text, found.end(), forms, option):
            return Opening(NON_ANSWER, found.end())  # "A. <the words of option C>": which one?
        return Opening(option, found.end())
    return _listed(text, start, forms)


def _listed(text: str, start: int, forms: Forms) -> Opening | None:
    """A list marker that is no form of the template ("2) <words>", the options numbered by the prompt but
    answered in words): the option whose words follow, where its place in the list is the marker's (1 or A:
    the first); otherwise none, since the marker names something."""
    marker = _MARKER.match(text, start)
    if marker is None:
        return None
    label = marker.group(1).upper()
    place = int(label) - 1 if label.isdigit() else ord(label) - ord("A")
    line = text[marker.end() :].split("\n", 1)[0]
    said, share = norm(line), _shares(line, forms)
    if place not in share or not said:
        return Opening(NON_ANSWER, marker.end())
    own = [w for i, w in forms.words if i == place]
    cut = len(said.split()) >= 3 and any(
        w.startswith(said) for w in own
    )  # it stopped inside the option's words
    if cut or (share[place] >= 0.6 and share[place] == max(share.values())):
        return Opening(place, marker.end() + len(line))
    return Opening(NON_ANSWER, marker.end())


def _words_of_another(text: str, at: int, forms: Forms, option: int) -> bool:
    """Whether the words right after a letter or number (`at`, to the end of its line) are rather another
    option's: its own words standing alone there, or, for three words or more, most of another option's words
    (60% or more) where the letter's own option's are not all there and fewer of them are ("A. Cindi's brother
    makes a mess", B being "Cindy's brother makes a mess")."""
    at += re.match(r"[\W_]*", text[at:]).end()
    for pattern, words, other in forms.entries:
        if other != option and not LABEL.fullmatch(words):
            found = pattern.match(text, at)
            if found and STANDS_ALONE.match(text, found.end()):
                return True
    said = set(norm(text[at:].split("\n", 1)[0]).split())
    if len(said) < 3:
        return False
    share = _shares(text[at:].split("\n", 1)[0], forms)
    own = share.get(option, 0.0)
    return own < 1 and any(i != option and s >= 0.6 and s > own for i, s in share.items())


def _shares(said: str, forms: Forms) -> dict[int, float]:
    """Per option, the share of its own words that `said` holds (the best of its word forms)."""
    words = set(norm(said).split())
    share: dict[int, float] = {}
    for i, own in forms.words:
        own_words = set(own.split())
        share[i] = max(share.get(i, 0.0), len(words & own_words) / len(own_words))
    return share


def mislabelled(text: str, forms: Forms, option: int) -> bool:
    """Whether `text` anywhere writes the letter (or number) of `option` followed by another option's words:
    what that letter stands for is then unclear, and a declaration of it reads as none."""
    for pattern, words, named in forms.entries:
        if named != option or not LABEL.fullmatch(words):
            continue
        for found in pattern.finditer(text):
            if STANDS_ALONE.match(text, found.end()) and _words_of_another(text, found.end(), forms, option):
                return True
    return False
