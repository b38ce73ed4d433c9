"""The prompts of Yerukola et al. (2024) and of the multiple-choice setup they compare with (Hu et al. 2022).

- `generation_prompt(item, cot)`: the reply prompt of the paper's Appendix A.3 ("Generate a short,
  concise single sentence response." ... "<listener> replies,"), plain (`cot=None`) or with one of
  the chain-of-thought levels 0-6 of the paper's section 4: 0 infer the intention, then reply;
  1 counterfactual reasoning about the literal meaning, with no inferred intention; 2 ask about the
  phenomenon, then infer the intention; 3 say that non-literal language is used, then infer the
  intention; 4 name the phenomenon, then infer the intention; 5 give the true intention; 6 give the true
  intention and the phenomenon. The levels and what each gives the model are the paper's; the wording
  of each instruction is ours (the released code has the plain prompt only). Levels 0-4
  make the model write its reasoning after "Thought:" and the reply after "Response:"; `extract_reply`
  takes the reply back out, and finds none in a generation without "Response:".
- `judge_prompt(...)`: the contextual-similarity prompt of Appendix A.4; `parse_choice` reads the answer.
- `mc_prompt(item, options)`: Hu et al.'s prompt with two options, ending in "Answer:".

Items are duck-typed (pragexp.data.intentions.io.IntentionItem's attributes): nothing here imports data.
"""

from __future__ import annotations

import re

COT_LEVELS = (0, 1, 2, 3, 4, 5, 6)
REASONING_LEVELS = (0, 1, 2, 3, 4)  # the model spells out its reasoning before the reply
INSTRUCTION = "Generate a short, concise single sentence response."
# How prompts ask about (level 2) and name (levels 4 and 6) each phenomenon of the release.
PHENOMENA = {
    "indirectspeech": ("Is {speaker} speaking indirectly?", "is speaking indirectly"),
    "irony": ("Is {speaker} being ironic?", "is being ironic"),
    "maxims": ("Is {speaker} flouting a conversational maxim?", "is flouting a conversational maxim"),
    "metaphor": ("Is {speaker} using a metaphor?", "is using a metaphor"),
}
MC_TASK = (
    "Task: You will read short stories that describe everyday situations. Each story will be followed by "
    "a multiple-choice question. Read each story and choose the best answer. Your task is to decide what "
    "the character in the story is trying to convey. The answer options are 1 or 2."
)


def parse_cot(value) -> int | None:
    """`prompt.cot`: none (the plain prompt) or a level 0-6."""
    if value is None or str(value).lower() in ("none", "null", ""):
        return None
    if str(value).isdigit() and int(value) in COT_LEVELS:
        return int(value)
    raise ValueError(f"prompt.cot must be none or one of 0-6, got {value!r}")


def _phenomenon(item) -> tuple[str, str]:
    question, statement = PHENOMENA.get(
        item.phenomenon, ("Is {speaker} using " + item.phenomenon + "?", "is using " + item.phenomenon)
    )
    return question.format(speaker=item.speaker), f"{item.speaker} {statement}"


def _scenario(item) -> str:
    return f"{item.context}\n{item.dialog_prefix} {item.utterance}"


def _cot_instruction(item, level: int) -> str:
    speaker, listener = item.speaker, item.listener
    question, named = _phenomenon(item)
    infer = f"First, infer what {speaker} really intends to convey."
    steps = {
        0: infer,
        # Counterfactual reasoning about the literal reading only: level 1 never asks for the intention.
        1: (
            f"First, think about what {speaker}'s words would mean if taken literally, and whether "
            f"{speaker} would say them in this situation if that were all {speaker} meant."
        ),
        2: f"First, answer this question: {question} Then infer what {speaker} really intends to convey.",
        3: f"{speaker} is using non-literal language. {infer}",
        4: f"{named}. {infer}",
    }
    if level in steps:
        respond = "Then respond" if level == 1 else "Then respond to that intention"
        return (
            f"{steps[level]} {respond} as {listener}.\n"
            f"Write your reasoning after 'Thought:' and {listener}'s response after 'Response:'."
        )
    if level == 5:
        return f"{speaker}'s true intention: {item.true_intention}"
    return f"{named}. {speaker}'s true intention: {item.true_intention}"


def generation_prompt(item, cot: int | None = None) -> str:
    lines = [INSTRUCTION, _scenario(item)]
    if cot is not None:
        lines.append(_cot_instruction(item, cot))
    lines.append(f"Generate a co-operative response without any non-literal language as {item.listener}")
    ending = "Thought:" if cot in REASONING_LEVELS else f"{item.listener} replies, "
    return "\n".join(lines) + "\n\n" + ending


_RESPONSE = re.compile(r"response\s*:", re.IGNORECASE)


def extract_reply(text: str, listener: str = "", cot: int | None = None) -> str:
    """The reply in a generation: after the last "Response:" for reasoning levels, then cut at the
    first blank line, without a leading "<listener> replies," and the quotes around it.

    "" when there is no reply to judge: a reasoning level's generation without a "Response:" marker (its
    text is the model's reasoning, not a reply: judging it would score the thought), or nothing left after
    the marker or the prefix. The task counts those (`no_reply`) and scores them as not following the true
    intention."""
    text = text.strip()
    if cot in REASONING_LEVELS:
        marks = list(_RESPONSE.finditer(text))
        if not marks:
            return ""
        text = text[marks[-1].end() :].strip()
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0].strip()
    if listener:
        text = re.sub(rf"^{re.escape(listener)}\s+(replies|responds|says)\s*,?\s*", "", text, flags=re.I)
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def judge_prompt(item, reply: str, first: str, second: str, contextual: bool = True) -> str:
    """Appendix A.4: which of two reference replies is closest to the generated one (options in the
    order given; the caller shuffles). `contextual=False` is the paper's non-contextual variant."""
    task = (
        "Task: You will read a short story. The story will be followed by a question. Your task is to "
        "decide which response option is closest to the 'Generated Response'. The answer options are 1 or 2 "
        "or 'neither'."
        if contextual
        else "Task: Your task is to decide which response option is closest to the 'Generated Response'. "
        "The answer options are 1 or 2 or 'neither'."
    )
    parts = [task, ""]
    if contextual:
        parts += [
            f"Scenario: {item.context}",
            f"{item.dialog_prefix} {item.utterance}",
            f"Intention: {item.true_intention}",
            "",
        ]
    parts += [
        "Generated Response:",
        f"{item.listener} replies, {reply}",
        "",
        "Compare the below utterances to the Generated Response. Which of the below utterances is closest "
        "to the above Generated Response?",
        "Options:",
        f"1. {first}",
        f"2. {second}",
        "Answer (option number 1 or 2):",
    ]
    return "\n".join(parts)


_NEITHER = re.compile(r"\b(neither|none)\b", re.IGNORECASE)
_OPTION = re.compile(r"(?:option|answer)\s*(?:number|no\.?|#)?\s*[:(]?\s*([12])\b", re.IGNORECASE)
_DIGIT = re.compile(r"(?<![\d.])([12])(?![\d])")


def parse_choice(text: str) -> str | None:
    """A judge's answer: "1", "2", "neither", or None when it says none of these."""
    text = (text or "").strip()
    if not text:
        return None
    head = re.match(r"^\W*([12])(?!\d)(?!\s*(?:or|and|/|,)\s*[12])", text)
    if head:
        return head.group(1)
    option = _OPTION.search(text)
    if option:
        return option.group(1)
    if _NEITHER.search(text):
        return "neither"
    digits = set(_DIGIT.findall(text))
    return digits.pop() if len(digits) == 1 else None


def mc_prompt(item, options: list[str]) -> str:
    """Hu et al.'s multiple-choice prompt (the item's own task line when it has one) with the given
    options numbered 1, 2, ...; it ends "Answer: " as theirs does."""
    lines = [
        getattr(item, "task_line", "") or MC_TASK,
        "",
        f"Scenario: {item.context} {item.dialog_prefix} {item.utterance} {item.question}",
    ]
    lines.append("Options:")
    lines += [f"{i}) {option}" for i, option in enumerate(options, start=1)]
    return "\n".join(lines) + "\nAnswer: "
