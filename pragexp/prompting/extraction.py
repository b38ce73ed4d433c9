"""The answer extractor's prompt: a reply whose answer the rules could not read (`parsing.read_answer`), put
to an LLM judge with the options lettered, as lm-evaluation-harness and PragReST fall back to; the judge
answers with a letter, read back by the same rules."""

from __future__ import annotations

from collections.abc import Sequence

from pragexp.prompting.parsing import read_answer
from pragexp.prompting.templates import letter

EXTRACTION = (
    "Below is a question's options and a reply to it. Which option does the reply give as its answer?\n\n"
    "Options:\n{options}\n\nReply:\n{reply}\n\n"
    'Answer with the option\'s letter alone, or "none" if the reply gives no option as its answer.'
)


def extraction_prompt(reply: str, options: Sequence[str]) -> str:
    lines = "\n".join(f"{letter(i)}. {o}" for i, o in enumerate(options))
    return EXTRACTION.format(options=lines, reply=reply.strip())


def read_extraction(text: str, options: Sequence[str]) -> int | None:
    """The option the judge's reply names by its letter (or words), or None ("none", or nothing readable)."""
    return read_answer(text, [letter(i) for i in range(len(options))], options)
