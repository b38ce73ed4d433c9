"""Prompts as data: what a data module hands an LLM (`PromptItem`), the templates that turn items into chat
turns or a plain completion prompt (`PromptTemplate`), the seeded choice of demonstrations, and reading a
generated answer back into an option. Data modules, tasks and the LLM model all import from here; it imports
none of them."""

from pragexp.prompting.demonstrations import pick_demonstrations
from pragexp.prompting.items import PromptItem
from pragexp.prompting.parsing import parse_option
from pragexp.prompting.templates import PromptTemplate, RenderedPrompt

__all__ = ["PromptItem", "PromptTemplate", "RenderedPrompt", "parse_option", "pick_demonstrations"]
