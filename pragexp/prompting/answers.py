"""Reading the answer of a free reply (its reasoning already cut): the option the reply clearly gives, or
None. Reading never guesses: a word that names an option somewhere in a reply is not an answer.

An option is named by a *form*: the continuation the template asked for (a letter, a number, the option's
words), the option's own words, or a letter followed by its option's words ("A. Incoherent"). Compared without
regard to case, punctuation, markdown or LaTeX's text commands. A form names its option only where it stands
alone: at the start of the text read (after quotes, brackets, bullets) and ending where a word ends: the end
of the text, punctuation other than "?" (a question asks, it does not answer), or "because"/"since"/"as". "No
comment", "Yes and no", "A or B", "maybe yes" name none; "No.", "(B)", "yes, subject to some conditions" do
(the longest form wins; where a longer form of another option begins the same way but does not stand alone,
none). A letter followed by another option's words ("A. <C's words>", or most of them) names none, and a
declared letter that the reply writes elsewhere with another option's words reads as none: which one did it
mean? A list marker that is no form of the template ("2) <words>": the prompt numbers the options, the
template asks for their words) names the option at its place (1 or A: the first) where the words that follow
are that option's (most of them, or their start where the reply was cut), and none otherwise.

The rules, in order (`read_answer`):
1. **Declarations**, the field's way of reading answers: "Answer: B", "the (final) answer is (option) 2", "the
   answer to the question "...?" is A", "I choose / pick / go with / would say yes", "the reply means /
   implies no", "is trying to convey that <option>", and `\\boxed{...}`. Each declaration's value (the rest of
   its line, or the next line when its line ends there) is read as one of: an option (a form stands alone at
   its start, and its sentence does not doubt it: "yes, but I'm not sure" is none); a *non-answer* (it opens
   with a negation or a hedge: "not yes", "isn't A", "unclear", "maybe", "both", "neither", "it depends"; two
   options joined: "yes or no"; the declaration is negated before it in its clause: "I don't think the answer
   is A"; "not X but Y" gives Y); *cut* (an empty value at the end of the reply: it stopped while declaring);
   or nothing (any other value: "the answer is based on the story"), which is skipped. **The last declaration
   that is not skipped decides**: a correction wins ("Answer: A ... wait, the answer is B" is B), several
   `\\boxed{}` are read as lm-evaluation-harness's `last_boxed_only_string` (its MATH and GPQA utilities)
   reads them, the last one; a non-answer or a cut declaration last gives None, and so do two last options
   joined by "or"/"and" ("\\boxed{A} or \\boxed{B}"), a retraction after the last ("Answer: A. Wait, that's
   wrong"), and a reply whose only declarations say what something means in words that are no option ("No, the
   reply means <its own words>"). A declaration inside a question or a condition ("whether the response
   implies yes") declares nothing.
2. Without a deciding declaration, **a reply that is an option** (`parse_option`): its first non-empty line
   opens with a form standing alone ("No.", "B", "A. Incoherent", "Yes, he will"), not followed by an
   acknowledgement ("Yes, I can help with that"); no later sentence opens with another option ("No. Yes, he
   will" changes its mind); and the reply holds no hedge or refusal anywhere ("I'm not sure", "it depends",
   "it's possible", "hard to say", "no idea", "I'm sorry", "as an AI", "maybe", "both", "neither", with the
   options' own words taken out first, so Circa's "neither yes nor no" stays an option), no two options joined
   ("No, the response does not imply yes or no"), and no option denied ("No, the reply does not mean yes, but
   rather ...": its "No" answers "does it mean yes?", another question).
3. Nothing else: None (`unparsed`, scored wrong). What `prompt.extractor` recovers is counted apart
   (`extracted`).

The rules were written against a labelled set of replies (tests/fixtures/replies/,
experiments/reading/README.md): on it, the answers they read are right at least 99 times in 100.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pragexp.prompting.answer_forms import (
    HEDGE,
    JOINED,
    LABEL,
    NON_ANSWER,
    Forms,
    mislabelled,
    norm,
    opening_option,
    plain,
)
from pragexp.prompting.declarations import read_declared

__all__ = ["Forms", "norm", "opening_option", "parse_option", "plain", "read_answer", "read_declared"]

# What follows an option that answers the user, not the question ("Yes, I can help with that").
_ACKNOWLEDGING = re.compile(
    r"[\W_]*(?:i\s+(?:can|could)\b|i\s+(?:would|will|'d|'ll)\s+(?:help|assist|be\s+(?:happy|glad))|i\s+(?:understand|see)\b"
    r"|i'?m\s+(?:ready|happy|glad|here)|i\s+am\s+(?:ready|happy|glad|here)|here\s+(?:is|are|'s)|let\s+me"
    r"|of\s+course|sure|certainly|absolutely)",
    re.IGNORECASE,
)
_DENIAL = re.compile(r"(?:\bnot|n't|\bnever|\bno\s+longer)(?:\W+\w+){0,2}?[\W_]*$", re.IGNORECASE)
_INTERJECTION = re.compile(
    r"[\W_]*(?:(?:wait|actually|oh|hmm+|sorry|so|well|i\s+mean|no\s+wait)\b[\W_]*)*", re.I
)


def joins_two_options(text: str, forms: Forms) -> bool:
    """Whether `text` anywhere names two options joined ("does not imply yes or no", "A and C are wrong")."""
    for pattern, _, option in forms.entries:
        for found in pattern.finditer(text):
            joined = JOINED.match(text, found.end())
            other = opening_option(text[joined.end() :], forms) if joined else None
            if other is not None and other.option not in (option, NON_ANSWER):
                return True
    return False


def denies_an_option(text: str, forms: Forms) -> bool:
    """Whether `text` negates an option ("does not mean yes", "it's not A"): an opening "No" is then the
    answer to another question ("does the reply mean yes?"), not an option."""
    for pattern, words, _ in forms.entries:
        if LABEL.fullmatch(words):
            continue  # a letter is also an article: "not just a normal light"
        for found in pattern.finditer(text):
            whole = not re.match(r"[a-z0-9]", text[found.end() : found.end() + 1], re.IGNORECASE)
            if whole and _DENIAL.search(text[max(0, found.start() - 40) : found.start()]):
                return True
    return False


def read_opening(text: str, forms: Forms) -> int | None:
    """Rule 2 (module docstring): the option a reply is."""
    masked = forms.masked(text)
    if HEDGE.search(masked) or joins_two_options(masked, forms) or denies_an_option(masked, forms):
        return None
    lines = text.strip().split("\n", 1)
    first = opening_option(lines[0], forms)
    if first is None or not isinstance(first.option, int) or _ACKNOWLEDGING.match(lines[0], first.end):
        return None
    rest = lines[0][first.end :] + ("\n" + lines[1] if len(lines) > 1 else "")
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", rest) + rest.split("\n")[1:]:  # sentences, and whole lines
        sentence = sentence[_INTERJECTION.match(sentence).end() :]
        later = opening_option(sentence, forms) if sentence else None
        if later is not None and later.option != first.option:
            return None
    return first.option


def read_answer(reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()) -> int | None:
    """The option a free reply gives, by the rules of the module docstring (declarations, the last deciding;
    else a reply that is an option); None where it gives none: counted as `unparsed`."""
    text = plain(reply or "")
    if not text.strip():
        return None
    forms = Forms.of(tuple(continuations), tuple(option_texts))
    declared = read_declared(text, forms)
    if declared is None:
        return read_opening(text, forms)
    return declared if isinstance(declared, int) and not mislabelled(text, forms, declared) else None


def parse_option(reply: str, options: Sequence[str]) -> int | None:
    """The option a reply is (rule 2 of the module docstring: its first line opens with an option standing
    alone, the longest, without a hedge or a change of mind), or None."""
    text = plain(reply or "")
    return read_opening(text, Forms.of(tuple(options))) if text.strip() else None
