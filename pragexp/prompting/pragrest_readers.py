"""PragReST's answer reading (Park et al. 2026; github.com/jihyung803/PragReST), as their evaluation code
reads a reply: the WHOLE reply, its reasoning included, and the FIRST match wins. pragexp's own rules read the
answer after the reasoning and let the last declaration win (`parsing.read_answer`); these two are for
reproducing their numbers (`prompt.template=pragrest`, `experiment=pragrest/...`).

- `first_boxed_number` (their src/eval/vllm_boxed_mcqa.py, `extract_boxed_answer`; Hu et al.'s items): the
  first `\\boxed{N}` anywhere (N digits, optionally followed by ")" or "." and more text before the brace
  closes: `\\boxed{2) The ...}`), else the first "Answer: N" (any case; "Final Answer: 2" is one). N names the
  option the template numbers N.
- `first_yes_no` (their scripts/eval_ludwig.py, `_parse_binary_answer`; LUDWIG): the first `\\boxed{...}`
  whose braces close (nested braces counted), the first word "yes" or "no" in it; when there is none there (or
  no such box), the first "yes" or "no" anywhere in the reply, the reasoning's words included ("Is it yes or
  no? ..." is yes).

Where these differ from their code: a number naming no option (0, or 5 of 4) is no answer here (`unparsed`), a
wrong answer there; both score it wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BOXED_NUMBER = re.compile(r"\\boxed\{\s*(\d+)(?:\s*[\).][^}]*)?\s*\}", re.IGNORECASE)
_ANSWER_NUMBER = re.compile(r"Answer:\s*(\d+)", re.IGNORECASE)
_BOX_OPENS = re.compile(r"\\boxed\s*\{", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def read_first_boxed_number(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """The option whose number (its continuation: the template writes `{number}`) the reply's first boxed
    number, else its first "Answer: N", gives; None: neither, or a number naming no option."""
    found = _BOXED_NUMBER.search(reply) or _ANSWER_NUMBER.search(reply)
    if found is None:
        return None
    numbers = [c.strip() for c in continuations]
    said = str(int(found.group(1)))
    return numbers.index(said) if said in numbers else None


def read_first_yes_no(
    reply: str, continuations: Sequence[str], option_texts: Sequence[str] = ()
) -> int | None:
    """The option ("yes" or "no": its continuation) the first closed box's first yes/no word, else the reply's
    first yes/no word, names; None: no such word, or no option says it."""
    boxed = first_closed_box(reply)
    found = (_YES_NO.search(boxed) if boxed else None) or _YES_NO.search(reply)
    if found is None:
        return None
    words = [c.strip().lower() for c in continuations]
    said = found.group(1).lower()
    return words.index(said) if said in words else None


def first_closed_box(text: str) -> str:
    """The content (stripped) of the first `\\boxed{...}` whose braces close; "" when none does."""
    for opening in _BOX_OPENS.finditer(text):
        depth = 0
        for i in range(opening.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return text[opening.end() : i].strip()
    return ""


# Readers that read the whole reply, its reasoning included (`PromptTemplate.reader`; the model gives them the
# reply, where it gives `parsing.READERS` the answer after the reasoning).
WHOLE_REPLY_READERS = {"first_boxed_number": read_first_boxed_number, "first_yes_no": read_first_yes_no}
