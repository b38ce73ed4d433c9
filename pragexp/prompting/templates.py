"""Prompt templates as data (conf/prompt/<dataset>.yaml lists several per dataset; `prompt.template` picks
one).

A template has
- `instruction`: what the task is; it opens the first user turn (not a system turn: several chat templates,
  Mistral's among them, refuse one) or, in a plain completion prompt, the text;
- `system`: a system turn that a protocol prescribes (ToMATO's authors' one); empty: none. In a plain prompt
  it opens the text. A backend's own `llm.system_prompt` is refused beside it (two system turns);
- `shots_instruction`: opens a prompt with demonstrations, before them (LUDWIG's "prompt instruction"); left
  out of a prompt without any; `item_instruction`: comes right before the evaluated item's input, not before
  the demonstrations' (LUDWIG's "example instruction");
- `input`: the item as the user says it, `{field}` slots filled from the item's fields, and `{options}` with
  the options listed one per line as `option_line` writes them (`{letter}`: A, B, ...; `{number}`: 1, 2, ...;
  `{option}`; and the item's fields);
- `answer`: the answer as the model writes it, `{option}` (the option's words), `{letter}` or `{number}`; a
  generation task's demonstrations show the item's `target` instead;
- `answer_prefix`: ends a plain completion prompt before the answer ("Answer:"); empty: the prompt ends with
  the input as it is (a template whose input already ends where the model goes on);
- `options`: the label verbalisations, in label order, for data whose items bring no options of their own;
- `reply_marker`: for a template that has the model reason before it answers ("Thought: ... Response: ..."),
  the marker after which a generated reply starts (`parsing.extract_reply`); none: the whole generation;
- `pairing`: how the prompt and an option's continuation become tokens to score
  (`generation.scoring.requests`): `lm-eval` (default) or `next-token` (Hu et al.'s protocol: the prompt as
  the tokenizer encodes it by default, each option one token of its own);
- `reader`: how a generated reply is read back into an option (`readers.READERS`): `declared` (default: the
  field's rules, the last declaration wins), `first_bracketed` (ToMATO's authors: the first "[A]".."[D]" in
  the reply), or a benchmark's authors' own rule (`first_line_exact`: Hi-ToM's first line "K. green_bucket";
  `opentom_answer`; PragReST's, which read the whole reply, reasoning included: `first_boxed_number`,
  `first_yes_no`).

Chat: the instruction and each demonstration's input are user turns, each demonstration's answer an assistant
turn, then the item's input; the model's chat template turns these into text (the LLM backend does it, so the
text it reads is known). Plain: instruction, shots instruction, then each demonstration as input, answer
prefix and answer, then the item instruction, the item's input and the answer prefix, separated by blank
lines. In both, an option's continuation is what follows the prompt: the answer as written (plain: after a
space). A rendered prompt also says where the item's own text starts (`own`, `head`): what comes before it
(system turn, instructions, demonstrations, the input's opening words) is the same for every item, and a
scorer runs it once (`generation.scoring.requests`: a request's head).
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pragexp.prompting.items import PromptItem

LETTERS = string.ascii_uppercase


def letter(i: int) -> str:
    """A, B, ... Z, then 27, 28, ... (a long list of options is better numbered than lettered twice)."""
    return LETTERS[i] if i < len(LETTERS) else str(i + 1)


@dataclass(frozen=True)
class RenderedPrompt:
    messages: tuple[dict, ...]  # chat turns (role, content)
    plain: str  # the same as one completion prompt, ending with the answer prefix and a space
    continuations: tuple[str, ...]  # per option, as the answer is written (no leading space)
    # the item's own text: its input from the first slot on, ending the last user turn's content
    own: str = ""
    head: int = 0  # how many leading characters of `plain` every item shares (all before `own`)


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    input: str
    instruction: str = ""
    answer: str = "{option}"
    answer_prefix: str = "Answer:"
    option_line: str = "{letter}. {option}"
    options: tuple[str, ...] | None = None
    reply_marker: str | None = None
    shots_instruction: str = ""
    item_instruction: str = ""
    pairing: str = "lm-eval"
    reader: str = "declared"
    system: str = ""

    @classmethod
    def from_config(cls, config: Mapping) -> PromptTemplate:
        known = set(cls.__dataclass_fields__)
        unknown = set(config) - known
        if unknown:
            raise ValueError(f"prompt template {config.get('name')!r}: unknown keys {sorted(unknown)}")
        values = dict(config)
        if values.get("options") is not None:
            values["options"] = tuple(str(o) for o in values["options"])
        return cls(**values)

    # -- pieces -----------------------------------------------------------------------------------------
    def item_options(self, item: PromptItem) -> tuple[str, ...]:
        options = item.options if item.options is not None else self.options
        if not options:
            raise ValueError(f"prompt template {self.name!r} has no options and the item brings none")
        return tuple(options)

    def _fill(self, text: str, values: Mapping[str, str]) -> str:
        try:
            return text.format_map(values)
        except KeyError as err:
            raise KeyError(
                f"prompt template {self.name!r} asks for {{{err.args[0]}}}; the item has "
                f"{', '.join(sorted(values))}"
            ) from None

    def user_text(self, item: PromptItem, with_options: bool = True) -> str:
        values = dict(item.fields)
        if with_options and "{options}" in self.input:
            values["options"] = "\n".join(
                self._fill(self.option_line, {**item.fields, **_option_slots(i, o)})
                for i, o in enumerate(self.item_options(item))
            )
        return self._fill(self.input, values)

    def continuations(self, item: PromptItem) -> tuple[str, ...]:
        return tuple(
            self._fill(self.answer, {**item.fields, **_option_slots(i, o)})
            for i, o in enumerate(self.item_options(item))
        )

    def gold_answer(self, item: PromptItem) -> str:
        """What a demonstration answers: its gold option as `answer` writes it, or its target text."""
        if item.label is not None:
            return self.continuations(item)[item.label]
        if item.target is not None:
            return item.target
        raise ValueError(f"demonstration {item.index} has neither a label nor a target")

    # -- whole prompts --------------------------------------------------------------------------------------
    def render(self, item: PromptItem, demonstrations: Sequence[PromptItem] = (), generate: bool = False):
        """The prompt for `item` after `demonstrations`; `generate`: no option continuations (free text)."""
        opening = [self.instruction, self.shots_instruction if demonstrations else ""]
        item_text = _joined([self.item_instruction, self.user_text(item)])
        turns: list[dict] = []
        for demo in demonstrations:
            turns.append({"role": "user", "content": self.user_text(demo)})
            turns.append({"role": "assistant", "content": self.gold_answer(demo)})
        turns.append({"role": "user", "content": item_text})
        turns[0] = {"role": "user", "content": _joined([*opening, turns[0]["content"]])}
        if self.system:
            turns.insert(0, {"role": "system", "content": self.system})
        blocks = [
            self.system,
            *opening,
            *(self._plain_turn(self.user_text(d)) + self.gold_answer(d) for d in demonstrations),
        ]
        user = self.user_text(item)
        blocks += [self.item_instruction, self._plain_turn(user)]
        continuations = () if generate else self.continuations(item)
        plain, own = _joined(blocks), user[len(self._input_opening()) :]
        head = len(plain) - len(self._plain_turn(user)) + len(user) - len(own)
        return RenderedPrompt(tuple(turns), plain, continuations, own, head)

    def _input_opening(self) -> str:
        """The input's text before its first slot (every item's input starts with it), less the whitespace
        that ends it (a tokenizer may glue it to the item's first word, and the head would end inside a
        token)."""
        return next(string.Formatter().parse(self.input), ("",))[0].rstrip()

    def _plain_turn(self, text: str) -> str:
        """An input as a plain prompt writes it, up to where the answer goes."""
        return f"{text}\n{self.answer_prefix} " if self.answer_prefix else text

    def content_free(self, item: PromptItem, token: str) -> PromptItem:
        """The item with every field replaced by a content-free token ("N/A"): Zhao et al. 2021's input for
        calibration. The options stay: they are what is being calibrated."""
        return PromptItem(
            -1, {k: token for k in item.fields}, item.options, demonstrations=item.demonstrations
        )


def _joined(blocks: Sequence[str]) -> str:
    """The non-empty blocks, a blank line between each."""
    return "\n\n".join(b for b in blocks if b)


def _option_slots(i: int, option: str) -> dict[str, str]:
    return {"letter": letter(i), "number": str(i + 1), "option": option}


def load_templates(configs: Sequence[Mapping]) -> list[PromptTemplate]:
    return [PromptTemplate.from_config(c) for c in configs]


def select_template(templates: Sequence[PromptTemplate], which: int | str) -> PromptTemplate:
    """`prompt.template`: a template's position in the group's list, or its name."""
    names = [t.name for t in templates]
    if isinstance(which, str) and not which.lstrip("-").isdigit():
        if which not in names:
            raise ValueError(f"prompt.template={which}: this prompt group has templates {', '.join(names)}")
        return templates[names.index(which)]
    index = int(which)
    if not 0 <= index < len(templates):
        raise ValueError(f"prompt.template={index}: this prompt group has templates 0..{len(templates) - 1}")
    return templates[index]
