"""How a template's generated replies are read back into an option: the registry `PromptTemplate.reader` names a
rule from (`READERS`). The field's rules and ToMATO's are `parsing`'s; a benchmark whose authors read replies their
own way adds its rule here, beside the others (a function `(reply, continuations, option_texts) -> option index or
None`, None: nothing readable, counted as `unparsed`), and its templates name it.

- `first_line_exact` (Hi-ToM, He et al. 2023): the authors' `check_response.ipynb` at commit a139da24 (cell 0
  keeps the first line of the reply, split on white space, without the first token "Answer:"; cell 1 requires
  exactly two tokens, as in "K. green_bucket", and scores the second against the gold container's name, character
  for character). The letter is not read (their cell 1 compares the name only), so "A. green_bucket" names
  green_bucket whatever option A is. A first line of another shape is dropped from their denominator; here it names
  no option (unparsed, scored wrong), and a name that is no option's is unparsed too (wrong in theirs as well).
"""

from __future__ import annotations

from collections.abc import Sequence

from pragexp.prompting.parsing import READERS as FIELD_READERS


def read_first_line_exact(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """Hi-ToM's authors' reading (see the module's docstring): the option whose text is the second of exactly two
    tokens on the reply's first line, "Answer:" aside; None for any other first line."""
    first = reply.split("\n", 1)[0]
    tokens = first.split()
    if "Answer:" in tokens:
        tokens.remove("Answer:")  # the first one only, as list.remove does in their notebook
    if len(tokens) != 2:
        return None
    named = [i for i, text in enumerate(option_texts) if text == tokens[1]]
    return named[0] if named else None


READERS = {**FIELD_READERS, "first_line_exact": read_first_line_exact}
