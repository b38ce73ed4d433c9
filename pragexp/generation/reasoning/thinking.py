"""Generating an answer after a model's reasoning, with a reasoning budget.

`answer_after_reasoning(llm, prompts, settings)` gives per prompt a `Thought`: the raw reply, the reasoning
(`prompting.reasoning.split_reasoning`), its token count (the backend's `count_tokens`), the answer text, and
whether the budget forced the reasoning closed.

- No budget (`budget` None): one greedy call of `max_new_tokens`, thinking and answer together; a block that
  never closes is no answer.
- A budget of N capping the reasoning (`caps="reasoning"`, budget forcing as s1 does): one call of N +
  `max_new_tokens` tokens. Reasoning that closed within N tokens: the answer is what follows it (at most
  `max_new_tokens`). Reasoning past N, or never closed: it is cut to its first N tokens, closed with
  `early_stop`, the end marker and `answer_cue`, and the model goes on from there (`Prompt.prefill`) for
  `max_new_tokens`: it must answer now (`forced`). A reply without any reasoning is its own answer (at most
  `max_new_tokens`).
- A budget of N capping the first reply (`caps="reply"`, PragReST's early stop: their
  src/eval/vllm_boxed_mcqa.py, `run_vllm_boxed_mcqa`): one call of N tokens, reasoning and answer together. A
  reply in which the caller's `answered` finds an answer is kept as it is. Any other (its reasoning past N, or
  an answer that cannot be read) is cut after its reasoning (the text after its last end marker dropped),
  `early_stop`, the end marker and `answer_cue` appended, and the model goes on for `max_new_tokens`
  (`forced`); the reply recorded is the first one whole, then the early stop and the answer, as theirs.

Every call goes through the backend given (the response cache: each phase is keyed by its prompt, prefill and
token limit, so the budget and the markers are part of the key of the call they decide).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt
from pragexp.prompting.reasoning import DEFAULT_MARKERS, check_markers, opens_reasoning, split_reasoning

CAPS = ("reasoning", "reply")


@dataclass(frozen=True)
class ThinkingSettings:
    max_new_tokens: int = 16  # the answer's tokens (with no budget: thinking and answer together)
    budget: int | None = None  # reasoning tokens before the model is made to answer
    markers: tuple[str, str] = DEFAULT_MARKERS
    answer_cue: str = "\n\nFinal answer:"  # what follows a forced close (s1's "Final Answer:")
    early_stop: str = ""  # what the model is made to say before a forced end marker (PragReST's message)
    caps: str = "reasoning"  # what the budget caps: the reasoning (s1) or the first reply (PragReST)

    def __post_init__(self):
        object.__setattr__(self, "markers", check_markers(self.markers))
        if self.budget is not None and int(self.budget) < 1:
            raise ValueError(f"prompt.reasoning_budget={self.budget}: give a number of tokens >= 1, or null")
        if self.caps not in CAPS:
            raise ValueError(f"prompt.budget_caps={self.caps}: choose one of {', '.join(CAPS)}")

    @classmethod
    def from_prompt(cls, prompt: Mapping) -> ThinkingSettings:
        """The settings of a prompt group (conf/prompt/_choice.yaml), each missing one at its default."""
        budget = prompt.get("reasoning_budget")
        return cls(
            max_new_tokens=int(prompt.get("max_new_tokens", cls.max_new_tokens)),
            budget=None if budget is None else int(budget),
            markers=tuple(prompt.get("reasoning_markers", DEFAULT_MARKERS)),
            answer_cue=str(prompt.get("answer_cue", cls.answer_cue)),
            early_stop=str(prompt.get("early_stop", cls.early_stop)),
            caps=str(prompt.get("budget_caps", cls.caps)),
        )

    @property
    def forced_close(self) -> str:
        """What closes a reasoning block at the budget: the early stop, the end marker, the answer's cue."""
        return self.early_stop + self.markers[1] + self.answer_cue


@dataclass(frozen=True)
class Thought:
    reply: str  # everything the model wrote (a forced close and its cue included)
    reasoning: str | None  # None: no reasoning block
    reasoning_tokens: int
    answer: str | None  # None: the reasoning never closed (no answer)
    forced: bool = False  # the budget closed the reasoning


# Whether a reply holds an answer (its position among the prompts, its Thought): the first reply's test when
# the budget caps the reply; by default, a closed block (or none).
Answered = Callable[[int, Thought], bool]


def answer_after_reasoning(
    llm: LLMBackend, prompts: list[Prompt], settings: ThinkingSettings, answered: Answered | None = None
) -> list[Thought]:
    """Greedy replies to `prompts`, their reasoning kept apart from their answers (the module's docstring)."""
    if settings.budget is not None and settings.caps == "reply":
        return _stop_unanswered(llm, prompts, settings, answered or (lambda i, t: t.answer is not None))
    budget, start = settings.budget, settings.markers[0]
    limit = settings.max_new_tokens + (budget or 0)
    replies = [draws[0] for draws in llm.generate(prompts, GenerationParams(max_new_tokens=limit))]
    thoughts: list[Thought | None] = []
    forcing: list[tuple[int, Prompt, str]] = []  # (position, prompt to go on from, the reasoning kept)
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
        kept = ("" if opened else start) + llm.first_tokens(split.reasoning, budget)
        forced_start = kept + settings.forced_close
        forcing.append((i, replace(prompt, prefill=prompt.prefill + forced_start), kept))
        thoughts.append(None)
    if forcing:
        params = GenerationParams(max_new_tokens=settings.max_new_tokens)
        answers = llm.generate([p for _, p, _ in forcing], params)
        for (i, _, kept), (answer,) in zip(forcing, answers, strict=True):
            # the reasoning is what the model wrote: the early stop is not its own
            cut = _thought(llm, kept + settings.markers[1], settings.markers, not kept.startswith(start))
            cue = settings.answer_cue.strip()
            reply = kept + settings.forced_close + answer
            thoughts[i] = Thought(reply, cut.reasoning, cut.reasoning_tokens, f"{cue} {answer}".strip(), True)
    return [t for t in thoughts if t is not None]


def _stop_unanswered(
    llm: LLMBackend, prompts: list[Prompt], settings: ThinkingSettings, answered: Answered
) -> list[Thought]:
    """The budget caps the first reply; one without an answer is stopped early and made to answer."""
    end = settings.markers[1]
    replies = [draws[0] for draws in llm.generate(prompts, GenerationParams(max_new_tokens=settings.budget))]
    thoughts: list[Thought] = []
    forcing: list[tuple[int, Prompt, Thought]] = []  # (position, prompt to go on from, the reasoning kept)
    for i, (prompt, reply) in enumerate(zip(prompts, replies, strict=True)):
        opened = opens_reasoning(prompt.text + prompt.prefill, settings.markers)
        thoughts.append(_thought(llm, reply, settings.markers, opened))
        if not answered(i, thoughts[i]):
            sent = _without_answer(reply, end)
            # what the model wrote before the forced close is its reasoning (the early stop is not its own)
            kept = _thought(llm, sent + end, settings.markers, opened)
            forcing.append((i, replace(prompt, prefill=prompt.prefill + sent + settings.forced_close), kept))
    if forcing:
        params = GenerationParams(max_new_tokens=settings.max_new_tokens)
        answers = llm.generate([p for _, p, _ in forcing], params)
        for (i, _, kept), (answer,) in zip(forcing, answers, strict=True):
            reply = thoughts[i].reply + settings.forced_close + answer
            answer_text = settings.answer_cue.lstrip() + answer
            thoughts[i] = Thought(reply, kept.reasoning, kept.reasoning_tokens, answer_text, True)
    return thoughts


def _thought(llm: LLMBackend, reply: str, markers: tuple[str, str], opened: bool) -> Thought:
    split = split_reasoning(reply, markers, opened)
    tokens = llm.count_tokens(split.reasoning) if split.reasoning else 0
    return Thought(reply, split.reasoning, tokens, split.answer)


def _without_answer(reply: str, end: str) -> str:
    """A first reply as PragReST sends it back at an early stop: whole when it holds no end marker; else
    without the text after its last one (stripped), when the reply ends with that text as stripped."""
    last = reply.rfind(end)
    tail = reply[last + len(end) :].strip() if last >= 0 else ""
    return reply[: -len(tail)].rstrip() if tail and reply.endswith(tail) else reply


def _cut(llm: LLMBackend, answer: str, settings: ThinkingSettings) -> str:
    return llm.first_tokens(answer, settings.max_new_tokens)
