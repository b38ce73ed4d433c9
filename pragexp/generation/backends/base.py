"""The base every LLM backend derives from, and what a generation call is made of.

- `generate(prompts, params) -> [[reply per sample] per prompt]`; backends implement
  `generate_samples(prompts, params, sample)`, the `sample`-th draw for every prompt, so that the cache can
  ask for exactly the draws it lacks and a draw is reproducible by its index.
- `loglikelihood_many(requests) -> [[OptionScore(loglik, tokens, bytes) per option] per request]`: the options
  of `ChoiceRequest`s, each context paired with each option as `requests.encode_request` says.
- `chat_text(messages) -> str | None`: chat turns as the model reads them, through its chat template, for a
  backend that holds the tokenizer (hf, vllm); None where the server applies it (openai).
- `embed(texts) -> (n, d)` L2-normalised float tensor.
- `count_tokens(text)`, `first_tokens(text, n)`: a reply's length and its first n tokens, by the model's
  tokenizer where the backend holds it (hf, vllm), else by words (a server's tokenizer is not at hand): a
  reasoning budget is counted in them.

A backend that cannot do one of these raises `UnsupportedCall` naming itself and the call. `identity()` holds
everything besides the call itself that decides an answer (the model, its revision and the files behind a
local path, dtype, device, ...), and nothing that cannot (where the cache lives, retries, concurrency): the
response cache keys on it, so a setting left out of it would let a changed configuration read stale answers,
and one put in it for nothing would lose answers already paid for. `key_identity(method)` is the part a call
of one kind reads (`RENDERING`: a scored context or an embedded text is put to the model as it is, without the
chat template or the system prompt). `calls` counts the model calls made. `finetune` says how the model learns
(`none` for every backend but the in-process one, `generation.finetuning.finetune`). A backend that gets its
answers in parts (a server's replies, a batch at a time) hands each over as it comes (`answer_arrived`): the
response cache stores it then, so that a run killed before the call returns keeps what it was answered.
`named_by()` is what names the identity without loading a model or asking a server (the settings), `address`
where a server is asked, `replay` the `llm.replay` setting: a replay finds the identity recorded under them
(`generation.cache.replay`). A server that cannot be reached raises `ServerUnreachable`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import torch

from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore


class ServerUnreachable(RuntimeError):
    """A server could not be reached, after every retry: the response cache may replay what it answered
    before (`generation.cache.replay`)."""


class UnsupportedCall(RuntimeError):
    def __init__(self, backend: str, call: str, hint: str = ""):
        super().__init__(f"llm backend {backend!r} cannot do {call}" + (f": {hint}" if hint else ""))


@dataclass(frozen=True)
class GenerationParams:
    temperature: float = 0.0
    max_new_tokens: int = 30
    top_p: float = 1.0
    samples: int = 1
    seed: int = 0
    ignore_eos: bool = False  # generate exactly max_new_tokens (benchmarks: the same budget for everyone)

    def key(self) -> dict:
        """What decides a draw, besides the prompt and the sample index (not `samples`: how many draws are
        asked for does not change any one of them)."""
        out = asdict(self)
        out.pop("samples")
        return out


@dataclass(frozen=True)
class Prompt:
    text: str
    # The item's reference replies, read only by the reference backends (never part of a cache key).
    reference: dict = field(default_factory=dict, compare=False, hash=False)
    # True: `text` is already what the model reads (a chat template applied by `chat_text`, or a plain
    # completion prompt): the backend adds no template and no special tokens.
    templated: bool = False
    # What names a sampled draw's random stream (`stream_seed`) when it is not `text`: a templated prompt's
    # content before its chat template, so that a draw is the same whether the model's template is applied by
    # the caller (model=llm) or by the backend (a raw prompt).
    seed_text: str | None = None
    # The start of the model's own reply, which it goes on from (a reasoning block closed at its budget): a
    # templated prompt's text is followed by it; a chat server gets it as the assistant's unfinished turn.
    prefill: str = ""

    @property
    def seed_key(self) -> str:
        return (self.text if self.seed_text is None else self.seed_text) + self.prefill


def draw_seed(seed: int, sample: int, parts: list = ()) -> int:
    """A 31-bit seed from the run's seed, a draw index and whatever else names the draw (JSON values)."""
    blob = json.dumps([seed, sample, list(parts)]).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little") & 0x7FFFFFFF


def stream_seed(params: GenerationParams, sample: int, text: str) -> int:
    """The seed of one draw's own random stream: the run's seed, the prompt, the temperature, top_p and the
    draw index, and nothing else, so that a draw gets the same reply alone, in any batch, at any batch size
    and after any cache history (never derive it from the other prompts of a batch)."""
    return draw_seed(params.seed, sample, [text, params.temperature, params.top_p])


def template_kwargs(kwargs) -> dict:
    """`llm.chat_template_kwargs` as plain data (`{enable_thinking: true}`): what the chat template is called
    with."""
    out = _plain(kwargs or {})
    if not isinstance(out, dict) or not all(isinstance(k, str) for k in out):
        raise ValueError(f"llm.chat_template_kwargs={out}: give a mapping of the template's variable names")
    return out


def with_system(system_prompt: str | None, messages: list[dict]) -> list[dict]:
    """The chat turns a chat template gets: `llm.system_prompt` first, when set. A prompt template that brings
    its own system turn (a protocol's) and a system prompt besides would be two system turns: refused."""
    if not system_prompt:
        return list(messages)
    if messages and messages[0].get("role") == "system":
        raise ValueError(
            "the prompt template has a system turn of its own (its protocol's): leave llm.system_prompt unset"
        )
    return [{"role": "system", "content": system_prompt}, *messages]


def _plain(value):
    """Config containers (Hydra passes its own) as dicts and lists: a cache key is their JSON."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


# The settings that say how a raw prompt is put to the model (its chat template, a system turn) and what its
# reply keeps (the reasoning markers): generation reads them; a scored context and an embedded text go to the
# model as they are, and nothing is decoded.
RENDERING = ("chat", "chat_template", "system_prompt", "chat_template_kwargs", "reasoning_markers")


class LLMBackend:
    name = "backend"
    cacheable = True  # the reference backends answer from the data: nothing to cache
    finetune = "none"  # only an in-process model learns (llm=hf: generation.finetuning.finetune)
    adapter: str | None = (
        None  # the folder of the tuned adapter it loaded (llm=hf: llm.adapter); run.json names it
    )
    # per kind of call (the cache's method names), the `identity` fields its answers cannot depend on
    not_read_by: dict[str, tuple[str, ...]] = {"loglikelihood_many": RENDERING, "embed": RENDERING}

    # Where the answers of the call under way go as they arrive (set by the response cache for one call).
    on_answer: Callable[[int, object], None] | None = None
    # `llm.replay`: "auto" (replay from the response cache when the server cannot be reached), true (the cache
    # alone), false (never), or a run folder whose recorded identity to replay (`generation.cache.replay`)
    replay: bool | str = "auto"
    address: str | None = None  # where a server is asked (not part of the identity); None in-process

    def __init__(self) -> None:
        self.calls = 0  # model calls made (a batch of prompts counts once)

    def identity(self) -> dict:
        return {"backend": self.name}

    def named_by(self) -> dict:
        """The settings that name this backend's identity, read without loading the model or asking a server:
        what a replay finds the recorded identity by. An in-process backend's identity is its own name."""
        return self.identity()

    def answer_arrived(self, index: int, answer) -> None:
        """The call under way has its `index`-th answer (what the call returns at that place): handed to
        `on_answer` at once. Optional: what a call returns is stored in any case."""
        if self.on_answer is not None:
            self.on_answer(index, answer)

    def key_identity(self, method: str) -> dict:
        """What the answers of a `method` call rest on: `identity()` less the fields that call never reads."""
        unread = self.not_read_by.get(method, ())
        return {k: v for k, v in self.identity().items() if k not in unread}

    def generate(self, prompts: list[Prompt], params: GenerationParams) -> list[list[str]]:
        draws = [self.generate_samples(prompts, params, s) for s in range(params.samples)]
        return [[draw[i] for draw in draws] for i in range(len(prompts))]

    def generate_samples(self, prompts: list[Prompt], params: GenerationParams, sample: int) -> list[str]:
        raise UnsupportedCall(self.name, "generate")

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]:
        raise UnsupportedCall(self.name, "loglikelihood")

    def chat_text(self, messages: list[dict]) -> str | None:
        return None

    def embed(self, texts: list[str]) -> torch.Tensor:
        raise UnsupportedCall(self.name, "embed")

    def count_tokens(self, text: str) -> int:
        return len(_WORDS.findall(text))

    def first_tokens(self, text: str, n: int) -> str:
        return "".join(_WORDS.findall(text)[:n]).rstrip()


_WORDS = re.compile(r"\s*\S+")  # a word and the space before it: the tokens of a backend without a tokenizer
