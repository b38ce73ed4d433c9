"""Generating an answer after a model's reasoning, with a reasoning budget (budget forcing, as s1 does).

`answer_after_reasoning(llm, prompts, settings)` gives per prompt a `Thought`: the raw reply, the reasoning
(`prompting.reasoning.split_reasoning`), its token count (the backend's `count_tokens`), the answer text, and
whether the budget forced the reasoning closed.

- No budget (`budget` None): one greedy call of `max_new_tokens`, thinking and answer together; a block that
  never closes is no answer.
- A budget of N: one call of N + `max_new_tokens` tokens. Reasoning that closed within N tokens: the answer is
  what follows it (at most `max_new_tokens`). Reasoning past N, or never closed: it is cut to its first N tokens,
  closed with the end marker and followed by `answer_cue`, and the model goes on from there (`Prompt.prefill`) for
  `max_new_tokens`: it must answer now (`forced`). A reply without any reasoning is its own answer (at most
  `max_new_tokens`).

Every call goes through the backend given (the response cache: each phase is keyed by its prompt, prefill and
token limit, so the budget and the markers are part of the key of the call they decide).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt
from pragexp.prompting.reasoning import DEFAULT_MARKERS, check_markers, opens_reasoning, split_reasoning


@dataclass(frozen=True)
class ThinkingSettings:
    max_new_tokens: int = 16  # the answer's tokens (with no budget: thinking and answer together)
    budget: int | None = None  # reasoning tokens before the model is made to answer
    markers: tuple[str, str] = DEFAULT_MARKERS
    answer_cue: str = "\n\nFinal answer:"  # what follows a forced close (s1's "Final Answer:")

    def __post_init__(self):
        object.__setattr__(self, "markers", check_markers(self.markers))
        if self.budget is not None and int(self.budget) < 1:
            raise ValueError(f"prompt.reasoning_budget={self.budget}: give a number of tokens >= 1, or null")


@dataclass(frozen=True)
class Thought:
    reply: str  # everything the model wrote (a forced close and its cue included)
    reasoning: str | None  # None: no reasoning block
    reasoning_tokens: int
    answer: str | None  # None: the reasoning never closed (no answer)
    forced: bool = False  # the budget closed the reasoning


def answer_after_reasoning(
    llm: LLMBackend, prompts: list[Prompt], settings: ThinkingSettings
) -> list[Thought]:
    """Greedy replies to `prompts`, their reasoning kept apart from their answers (the module's docstring)."""
    budget, (start, end) = settings.budget, settings.markers
    limit = settings.max_new_tokens + (budget or 0)
    replies = [draws[0] for draws in llm.generate(prompts, GenerationParams(max_new_tokens=limit))]
    thoughts: list[Thought | None] = []
    forcing: list[tuple[int, Prompt, str]] = []  # (position, prompt to go on from, the forced start)
    for i, (prompt, reply) in enumerate(zip(prompts, replies, strict=True)):
        opened = opens_reasoning(prompt.text + prompt.prefill, settings.markers)
        split = split_reasoning(reply, settings.markers, opened)
        tokens = llm.count_tokens(split.reasoning) if split.reasoning else 0
        if split.reasoning is None or budget is None or (split.closed and tokens <= budget):
            answer = (
                split.answer if budget is None or split.answer is None else _cut(llm, split.answer, settings)
            )
            thoughts.append(Thought(reply, split.reasoning, tokens, answer))
            continue
        kept = llm.first_tokens(split.reasoning, budget)
        forced_start = ("" if opened else start) + kept + end + settings.answer_cue
        forcing.append((i, replace(prompt, prefill=prompt.prefill + forced_start), forced_start))
        thoughts.append(None)
    if forcing:
        params = GenerationParams(max_new_tokens=settings.max_new_tokens)
        answers = llm.generate([p for _, p, _ in forcing], params)
        for (i, _, forced_start), (answer,) in zip(forcing, answers, strict=True):
            kept = split_reasoning(forced_start, settings.markers, opened=not forced_start.startswith(start))
            tokens = llm.count_tokens(kept.reasoning or "")
            cue = settings.answer_cue.strip()
            thoughts[i] = Thought(
                forced_start + answer, kept.reasoning, tokens, f"{cue} {answer}".strip(), True
            )
    return [t for t in thoughts if t is not None]


def _cut(llm: LLMBackend, answer: str, settings: ThinkingSettings) -> str:
    return llm.first_tokens(answer, settings.max_new_tokens)
