"""How a template's generated replies are read back into an option: the registry `PromptTemplate.reader` names
a rule from (`READERS`). The field's rules and ToMATO's are `parsing`'s, PragReST's (which read the whole
reply, its reasoning included: `WHOLE_REPLY`) `pragrest_readers`'; a benchmark whose authors read replies
their own way adds its rule here, beside the others (a function `(reply, continuations, option_texts) ->
option index or None`, None: nothing readable, counted as `unparsed`), and its templates name it.

- `first_line_exact` (Hi-ToM, He et al. 2023): the authors' `check_response.ipynb` at commit a139da24 (cell 0
  keeps the first line of the reply, split on white space, without the first token "Answer:"; cell 1 requires
  exactly two tokens, as in "K. green_bucket", and scores the second against the gold container's name,
  character for character). The letter is not read (their cell 1 compares the name only), so "A. green_bucket"
  names green_bucket whatever option A is. A first line of another shape is dropped from their denominator;
  here it names no option (unparsed, scored wrong), and a name that is no option's is unparsed too (wrong in
  theirs as well).
- `opentom_answer` (OpenToM, Xu et al. 2024): the authors' `OpenToMEvaluator`
  (src/evaluate/opentom_evaluator.py), each genre's check told apart by the item's options (the genre's label
  words, or two places: fine location). Coarse location (`check_answer_for_cg_location`): "no" and not "yes"
  anywhere in the lower-cased reply is No, the other way round Yes (as substrings: "not" holds "no"). Fullness
  (`check_fullness_answer`, the reply without full stops, lower-cased): "less full", "emptier" or "more
  empty", else "more full" or "fuller", else "equally full". Accessibility (`check_accessibility_answer`):
  "more", else "less", else "equally accessible". Attitude (`check_attitude_answer`): the reply's last
  paragraph after its last colon, up to its first full stop: "a", "b" or "c" (positive, neutral, negative),
  else the one label word it holds (two: none). Fine location (`check_answer_for_fg_location` with
  `compute_lexical_overlap`): the share of each place's words (its determiner cut by `remove_determinant`)
  that the reply holds; the place with the larger share, and none on a tie (their evaluator keeps a tie as a
  third, wrong class; here it names no option: unparsed). A reply their checks give no label ("corrupted",
  left out of their F1) names no option here either.
"""

from __future__ import annotations

from collections.abc import Sequence

from pragexp.prompting.parsing import READERS as FIELD_READERS
from pragexp.prompting.pragrest_readers import WHOLE_REPLY_READERS


def read_first_line_exact(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """Hi-ToM's authors' reading (see the module's docstring): the option whose text is the second of exactly
    two tokens on the reply's first line, "Answer:" aside; None for any other first line."""
    first = reply.split("\n", 1)[0]
    tokens = first.split()
    if "Answer:" in tokens:
        tokens.remove("Answer:")  # the first one only, as list.remove does in their notebook
    if len(tokens) != 2:
        return None
    named = [i for i, text in enumerate(option_texts) if text == tokens[1]]
    return named[0] if named else None


FULLNESS = {"less full": ("less full", "emptier", "more empty"), "more full": ("more full", "fuller")}
FULLNESS["equally full"] = ("equally full",)
ACCESSIBILITY = ("more accessible", "less accessible", "equally accessible")
ATTITUDE = {"a": "positive", "b": "neutral", "c": "negative"}


def read_opentom_answer(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """OpenToM's authors' reading of a reply to a question of the genre its options say (the module's
    docstring)."""
    options = list(option_texts)
    said = reply.strip().lower()
    kinds = set(options)
    if kinds == {"No", "Yes"}:
        found = {word for word in ("no", "yes") if word in said}
        return options.index(found.pop().capitalize()) if len(found) == 1 else None
    if kinds == set(FULLNESS) or kinds == set(ACCESSIBILITY):
        plain = said.replace(".", "")
        words = FULLNESS if kinds == set(FULLNESS) else {label: (label,) for label in ACCESSIBILITY}
        label = next((label for label, forms in words.items() if any(f in plain for f in forms)), None)
        return None if label is None else options.index(label)
    if kinds == set(ATTITUDE.values()):
        token = said.split("\n\n")[-1].split(":")[-1].split(".")[0].strip()
        named = [label for label in ATTITUDE.values() if label in token]
        label = ATTITUDE.get(token) or (named[0] if len(named) == 1 else None)
        return None if label is None else options.index(label)
    if len(options) == 2:
        shares = [_overlap(said, _place(option)) for option in options]
        return None if shares[0] == shares[1] else shares.index(max(shares))
    return None


def _place(text: str) -> str:
    """A place as their check compares it: a leading "a", "an" or "the" cut as a plain prefix (their
    `remove_determinant`: "armoire" loses its "a"), then lower case."""
    for determiner in ("a", "an", "the"):
        if text.startswith(determiner):
            return text[len(determiner) :].strip().lower()
    return text.lower()


def _overlap(reply: str, place: str) -> float:
    """Their `compute_lexical_overlap`: the share of the place's words that the reply holds (each counted
    once)."""
    words = place.replace("_", " ").replace("'s", "").split()
    said = set(reply.replace("_", " ").replace("'s", "").replace(".", "").split())
    return sum(word in said for word in dict.fromkeys(words)) / len(words) if words else 0.0


READERS = {
    **FIELD_READERS,
    "first_line_exact": read_first_line_exact,
    "opentom_answer": read_opentom_answer,
    **WHOLE_REPLY_READERS,
}
WHOLE_REPLY = frozenset(
    WHOLE_REPLY_READERS
)  # these read the reply with its reasoning, the others what follows it
