"""Prompts as data: what a data module hands an LLM (`PromptItem`), the templates that turn items into chat
turns or a plain completion prompt (`PromptTemplate`; every task's templates are data in conf/prompt/), the
seeded choice of demonstrations, and reading generated text back (an option, a reply after reasoning, a
judge's answer). Data modules, tasks, judges and the LLM model all import from here; it imports nothing else
of pragexp."""

from pragexp.prompting.demonstrations import pick_demonstrations
from pragexp.prompting.items import PromptItem
from pragexp.prompting.parsing import extract_reply, parse_choice, parse_option, read_answer
from pragexp.prompting.templates import PromptTemplate, RenderedPrompt, load_templates, select_template

__all__ = [
    "PromptItem",
    "PromptTemplate",
    "RenderedPrompt",
    "extract_reply",
    "load_templates",
    "parse_choice",
    "parse_option",
    "pick_demonstrations",
    "read_answer",
    "select_template",
]
