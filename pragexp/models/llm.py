"""`model=llm`: an LLM (any `llm=` backend) in the place of a trained model, on every task's own data, metrics
and prediction files: the one route by which pragexp puts a dataset in front of an LLM.

`PromptedLLM` reads `PromptItem`s (the data modules give them when the model's traits say `reads_prompts`),
renders them with the task's prompt group (`prompt=`: templates, demonstrations, chat or plain) and
- as a chooser (`forward(items)`), returns one score per option, (batch, options), which the task reads as a
  trained model's logits. `prompt.scoring`: `sum` | `per_token` | `per_byte`: the options' continuation
  log-likelihoods, summed or normalised (`ranking.normalized`); `calibrated`: Zhao et al. 2021's contextual
  calibration by content-free inputs (`prompt.content_free`; `ranking.calibrate`); `generate`: greedy
  generation, a thinking model's reasoning cut first and capped by `prompt.reasoning_budget`
  (`generation.reasoning.thinking`), the answer read back as the field reads them (`prompting.read_answer`:
  the last declaration wins; never a guess; or by the template's `reader`, PragReST's reading the whole reply)
  and, with `prompt.extractor`, what the rules cannot read put to the same LLM; the chosen option scores 0,
  the others -inf, and a reply with no answer gives a row of -inf (wrong). `unparsed` marks what the rules
  could not read, with or without the extractor; `extracted`, what the extractor then read;
- as a writer (`write(items)`: greedy, or `draw(items, params)`: sampled, several draws), returns free text.

Demonstrations (`prompt.shots`) are drawn once from the training items (`demonstrate`), seeded: the same for
every item, so that they form one prefix computed once (`prompt.demonstrations: shared`); or each item brings
its own, chosen by its dataset's protocol (`per_item`: LUDWIG's k dev pairs per test pair). The prompt goes
through the backend's chat template when `prompt.chat` and the backend can (`chat_text`), else it is the plain
completion text. The template says how the prompt and each option become tokens (`pairing`,
`generation.scoring.requests`).

Every model call goes through the response cache (`generation.cache.cached_backend.cached`, with `cache_dir`
and `use_cache`): same config, same numbers, without re-running the model. What each decision rests on is kept
per item (`take_records`: the text the model read, each option's continuation, log-likelihood, token and byte
counts, the scores and the choice) for predictions.jsonl.

Fine-tuned (`llm.finetune=lora|full`, `pragexp.train`, `llm=hf`): the tuned model becomes the submodule `lm`
and learns as `generation.finetuning.finetune` says (the options' scores exactly as evaluation computes them;
a writer's target text); a tuned model's answers are not cached (its weights change).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import torch

from pragexp.generation.backends.base import GenerationParams, Prompt
from pragexp.generation.cache.cached_backend import cached
from pragexp.generation.finetuning import adapters, finetune
from pragexp.generation.ranking import CONTENT_FREE, NORMALIZATIONS, calibrate, choose, normalized
from pragexp.generation.reasoning.thinking import ThinkingSettings, answer_after_reasoning
from pragexp.generation.scoring.requests import ChoiceRequest, OptionScore
from pragexp.models.traits import ModelTraits, PragexpModel
from pragexp.prompting import (
    PromptItem,
    RenderedPrompt,
    load_templates,
    pick_demonstrations,
    select_template,
)
from pragexp.prompting.extraction import extraction_prompt, read_extraction
from pragexp.prompting.readers import READERS, WHOLE_REPLY
from pragexp.runs.record import LLMRecord, ModelRecord, Prompting, llm_row
from pragexp.utils.contracts import require

SCORINGS = (*NORMALIZATIONS, "calibrated", "generate")
DEMONSTRATIONS = ("shared", "per_item")


class PromptBackend(Protocol):
    """What `PromptedLLM` asks of an LLM backend (every `generation.backends.base.LLMBackend` has it; a
    backend that cannot make a call raises `UnsupportedCall` naming itself)."""

    name: str
    finetune: str

    def identity(self) -> dict: ...

    def generate(self, prompts: list[Prompt], params: GenerationParams) -> list[list[str]]: ...

    def loglikelihood_many(self, requests: list[ChoiceRequest]) -> list[list[OptionScore]]: ...

    def chat_text(self, messages: list[dict]) -> str | None: ...


class PromptedLLM(PragexpModel):
    @classmethod
    def traits(cls, llm: PromptBackend | None = None, **config) -> ModelTraits:
        """Reads prompts; learns weights (evaluating it needs its checkpoint) only when fine-tuned."""
        return ModelTraits(learns_weights=llm is not None and llm.finetune != "none", reads_prompts=True)

    def __init__(
        self,
        llm: PromptBackend,
        prompt: Mapping,
        cache_dir: str | None = None,
        use_cache: bool = True,
        reads_prompts: bool = True,
        # what tasks pass every model (num_labels, vocab_size, ...): an LLM needs only num_labels
        **task_sizes,
    ):
        super().__init__()
        if not reads_prompts:
            raise ValueError("model=llm reads prompts: leave model.reads_prompts=true")
        if llm is None:
            raise ValueError("model=llm needs an LLM backend: llm=hf (default), vllm, openai or tiny")
        require(llm, PromptBackend, f"llm backend {type(llm).__name__}")
        self.template = select_template(load_templates(prompt["templates"]), prompt.get("template", 0))
        if self.template.reader not in READERS:
            raise ValueError(
                f"prompt template {self.template.name!r}: reader {self.template.reader!r}, choose one of "
                f"{', '.join(READERS)}"
            )
        self._read_settings(prompt)
        self._check_labels(task_sizes.get("num_labels"))
        self.finetune, self.backend = (
            llm.finetune,
            llm,
        )  # the backend itself: its identity and adapter for run.json
        self.llm: PromptBackend = cached(llm, cache_dir, use_cache)  # a tuned model's answers are not cached
        self.register_buffer("_anchor", torch.zeros(0), persistent=False)  # where Lightning put the module
        if self.learns:
            self.tuning = finetune.tunable(llm)
            # registered: Lightning moves, wraps (DDP) and optimises it
            self.lm = self.tuning.trainable_model()
            finetune.keep_trained_weights(self, "lm")
        self.demonstrations: list[PromptItem] = []
        self._records: list[tuple[int, dict]] = []

    def _read_settings(self, prompt: Mapping) -> None:
        self.shots, self.seed = int(prompt.get("shots", 0)), int(prompt.get("seed", 0))
        self.balanced, self.chat = bool(prompt.get("balanced", False)), bool(prompt.get("chat", True))
        self.scoring = str(prompt.get("scoring", "sum"))
        if self.scoring not in SCORINGS:
            raise ValueError(f"prompt.scoring={self.scoring}: choose one of {', '.join(SCORINGS)}")
        self.content_free_inputs = tuple(prompt.get("content_free", CONTENT_FREE))
        self.max_new_tokens = int(prompt.get("max_new_tokens", 16))
        self.thinking = ThinkingSettings.from_prompt(prompt)
        self.extractor = bool(prompt.get("extractor", False))
        self.demonstration_mode = str(prompt.get("demonstrations", "shared"))
        if self.demonstration_mode not in DEMONSTRATIONS:
            raise ValueError(
                f"prompt.demonstrations={self.demonstration_mode}: choose one of {', '.join(DEMONSTRATIONS)}"
            )

    def _check_labels(self, num_labels: int | None) -> None:
        options = self.template.options
        if num_labels is not None and options is not None and len(options) != int(num_labels):
            raise ValueError(
                f"prompt template {self.template.name!r} verbalises {len(options)} labels, the data has "
                f"{num_labels} (data.labels=strict needs the strict prompt group?)"
            )

    @property
    def learns(self) -> bool:
        """Whether the LLM's weights train here (`llm.finetune` lora or full)."""
        return self.finetune != "none"

    @property
    def generates(self) -> bool:
        """Whether it chooses by generating text, which may name no option (`no_answer`)."""
        return self.scoring == "generate"

    # -- set-up ----------------------------------------------------------------------------------------------
    def demonstrate(self, training_items: Sequence[PromptItem]) -> None:
        """Draw the `shots` shared demonstrations (none for 0-shot) from the training items; nothing to draw
        when each item brings its own (`per_item`)."""
        if self.demonstration_mode == "shared":
            self.demonstrations = pick_demonstrations(training_items, self.shots, self.seed, self.balanced)

    def demonstrations_for(self, item: PromptItem) -> Sequence[PromptItem]:
        if self.demonstration_mode == "shared":
            return self.demonstrations
        if len(item.demonstrations) != self.shots:
            raise ValueError(
                f"prompt.shots={self.shots} with prompt.demonstrations=per_item, but item {item.index} "
                "brings "
                f"{len(item.demonstrations)} demonstrations: does the data module's shots setting follow "
                "prompt.shots?"
            )
        return item.demonstrations

    def describe(self) -> dict:
        """The settings a prediction record names."""
        settings = {"template": self.template.name, "shots": self.shots, "scoring": self.scoring}
        return (
            {**settings, "pairing": self.template.pairing} if self.template.pairing != "lm-eval" else settings
        )

    def declare(self, name: str, row: str | None, trained: bool) -> ModelRecord:
        """run.json's model: the backend's identity and this prompting; the row is the LLM's own (`llm_row`),
        one across tasks. The prompt group's name is the run's to fill (the config names it, not the
        prompt)."""
        identity = self.llm.identity()  # behind the cache: the identity its answers were keyed under
        adapter = self.backend.adapter
        prompting = Prompting(None, self.template.name, self.shots, self.scoring, self.chat, self.generates)
        llm = LLMRecord(
            identity.get("model"),
            identity.get("backend", self.backend.name),
            identity.get("files"),
            identity.get("dtype"),
            Path(adapter).name if adapter else None,
            prompting,
        )
        tuning = self.finetune if self.learns else "none"
        return ModelRecord(name, llm_row(llm.name, self.shots, tuning), tuning, llm)

    def take_records(self) -> list[tuple[int, dict]]:
        """(dataset index, record) of each item seen since the last call, in the order seen."""
        records, self._records = self._records, []
        return records

    # -- rendering -------------------------------------------------------------------------------------------
    def text(self, rendered: RenderedPrompt, llm: PromptBackend) -> str:
        """What the model reads: the chat turns through its chat template, or the plain prompt."""
        chat = llm.chat_text(list(rendered.messages)) if self.chat else None
        return rendered.plain if chat is None else chat

    def _requests(self, items: Sequence[PromptItem], llm: PromptBackend) -> list[ChoiceRequest]:
        rendered = [self.template.render(item, self.demonstrations_for(item)) for item in items]
        texts = [self.text(r, llm) for r in rendered]
        # Demonstrations drawn for each item make each head its own, and a head shared by no other item only
        # costs (the scorer's passes hold items of one head): there, the whole prompt is the item's.
        shared = self.demonstration_mode == "shared" or not self.shots
        pairing = self.template.pairing
        return [
            ChoiceRequest(t, r.continuations, pairing, _head(r, t) if shared else 0)
            for r, t in zip(rendered, texts, strict=True)
        ]

    def _writing_prompts(self, items: Sequence[PromptItem], llm: PromptBackend) -> list[Prompt]:
        """What a writer sends: the text the model reads, its draws named by the prompt's content before the
        chat template (the same draws whether this model or the backend applies the template)."""
        rendered = [self.template.render(i, self.demonstrations_for(i), generate=True) for i in items]
        return [
            Prompt(self.text(r, llm), dict(i.references), templated=True, seed_text=r.plain)
            for r, i in zip(rendered, items, strict=True)
        ]

    # -- choosing --------------------------------------------------------------------------------------------
    def forward(self, items: Sequence[PromptItem]) -> torch.Tensor:
        """(batch, options) option scores; with gradients while a tuned model trains."""
        if self.learns and torch.is_grad_enabled():
            rows = finetune.choice_scores(self.tuning, self._requests(items, self.llm), self.scoring)
            return torch.stack(rows).to(self._anchor.device)
        llm = self.llm
        scores = self._choose_by_generation(items, llm) if self.generates else self._choose(items, llm)
        return scores.to(self._anchor.device)

    def _choose(self, items: Sequence[PromptItem], llm: PromptBackend) -> torch.Tensor:
        requests = self._requests(items, llm)
        free = []  # per item, its content-free prompts (calibration)
        if self.scoring == "calibrated":
            for item in items:
                cf = [self.template.content_free(item, token) for token in self.content_free_inputs]
                free.append(self._requests(cf, llm))
        answers = iter(llm.loglikelihood_many([*requests, *(r for row in free for r in row)]))
        scored = [next(answers) for _ in requests]
        free_scores = [[next(answers) for _ in row] for row in free]
        rows = []
        for i, (item, request, option_scores) in enumerate(zip(items, requests, scored, strict=True)):
            if free:
                values = calibrate(option_scores, free_scores[i])
            else:
                values = normalized(option_scores, self.scoring)
            rows.append(values)
            record = {
                **self.describe(),
                "prompt": request.context,
                "head": request.head,  # the prompt's leading characters its items share: part of the request
                "continuations": list(request.options),
                "loglik": [round(s.loglik, 6) for s in option_scores],
                "tokens": [s.tokens for s in option_scores],
                "bytes": [s.bytes for s in option_scores],
                "scores": [round(v, 6) for v in values],
                "choice": choose(values),
            }
            if free:
                record["content_free_loglik"] = [[round(s.loglik, 6) for s in cf] for cf in free_scores[i]]
            self._records.append((item.index, record))
        return _padded(rows)

    def _choose_by_generation(self, items: Sequence[PromptItem], llm: PromptBackend) -> torch.Tensor:
        """Greedy replies, their reasoning cut (`generation.reasoning.thinking`), each answer read by the
        rules (the template's `reader`: `prompting.read_answer` by default) and, with `prompt.extractor`, what
        they cannot read put to the same LLM."""
        requests = self._requests(items, llm)
        options = [self.template.item_options(item) for item in items]
        read, whole = READERS[self.template.reader], self.template.reader in WHOLE_REPLY

        # a whole-reply reader (PragReST's) reads the reasoning too
        def choice(i: int, thought) -> int | None:
            text = thought.reply if whole else thought.answer
            return None if text is None else read(text, requests[i].options, options[i])

        prompts = [Prompt(r.context, templated=True) for r in requests]
        thoughts = answer_after_reasoning(llm, prompts, self.thinking, lambda i, t: choice(i, t) is not None)
        choices = [choice(i, t) for i, t in enumerate(thoughts)]
        extracted = self._extract(thoughts, choices, options, llm) if self.extractor else {}
        rows = []
        for i, (item, request, thought) in enumerate(zip(items, requests, thoughts, strict=True)):
            choice = extracted.get(i, choices[i])
            row = torch.full((len(request.options),), float("-inf"))
            if choice is not None:
                row[choice] = 0.0
            rows.append(row.tolist())
            record = self._generation_record(request, thought, choices[i], choice, i in extracted)
            self._records.append((item.index, record))
        return _padded(rows)

    def _generation_record(
        self, request: ChoiceRequest, thought, read: int | None, choice: int | None, extracted: bool
    ) -> dict:
        """What a generated choice rests on. `unparsed`: the rules read no answer (`read` None: an unclosed
        reasoning block, a reply without a clear answer), whether or not the extractor then read one;
        `extracted` (with `prompt.extractor`): the extractor read the answer the rules could not (`choice`). A
        choice of None is scored wrong."""
        record = {**self.describe(), "prompt": request.context, "continuations": list(request.options)}
        record.update(reply=thought.reply, answer=thought.answer, choice=choice, unparsed=read is None)
        if thought.reasoning is not None:
            record.update(reasoning=thought.reasoning, reasoning_tokens=thought.reasoning_tokens)
        if self.thinking.budget is not None:
            record["forced"] = thought.forced
        if self.extractor:
            record["extracted"] = extracted
        return record

    def _extract(self, thoughts, choices, options, llm: PromptBackend) -> dict[int, int]:
        """{item position: option} for the answers the rules could not read and the extractor could (an answer
        that is there: an unclosed block stays no answer)."""
        todo = [i for i, (t, c) in enumerate(zip(thoughts, choices, strict=True)) if c is None and t.answer]
        asked = [extraction_prompt(thoughts[i].answer, options[i]) for i in todo]
        texts = [self.text(RenderedPrompt(({"role": "user", "content": a},), a, ()), llm) for a in asked]
        params = GenerationParams(max_new_tokens=8)
        replies = llm.generate(
            [Prompt(t, templated=True, seed_text=a) for t, a in zip(texts, asked, strict=True)], params
        )
        found = {i: read_extraction(r[0], options[i]) for i, r in zip(todo, replies, strict=True)}
        return {i: c for i, c in found.items() if c is not None}

    # -- writing ---------------------------------------------------------------------------------------------
    def write(self, items: Sequence[PromptItem]) -> list[str]:
        """Greedy free text per item (a generation task: the demonstrations show their targets)."""
        params = GenerationParams(temperature=0.0, max_new_tokens=self.max_new_tokens)
        return [draws[0] for draws in self.draw(items, params)]

    def draw(self, items: Sequence[PromptItem], params: GenerationParams) -> list[list[str]]:
        """`params.samples` replies per item, each draw from its own seeded stream; the item's `references`
        go with its prompt (a reference backend replays them)."""
        llm = self.llm
        prompts = self._writing_prompts(items, llm)
        replies = llm.generate(prompts, params)
        for item, prompt, draws in zip(items, prompts, replies, strict=True):
            self._records.append((item.index, {**self.describe(), "prompt": prompt.text, "reply": draws[0]}))
        return replies

    def target_nll(
        self, items: Sequence[PromptItem], targets: Sequence[str]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per item: the summed NLL of its target text after its writing prompt, closed by the end-of-text
        token, and the number of target tokens (a tuned writer's loss and dev perplexity)."""
        if not self.learns:
            raise ValueError("target_nll needs the model in process: llm.finetune=lora or full")
        contexts = [p.text for p in self._writing_prompts(items, self.llm)]
        nll, tokens = finetune.target_nll(self.tuning, contexts, targets)
        return nll.to(self._anchor.device), tokens.to(self._anchor.device)

    # -- checkpoints -----------------------------------------------------------------------------------------
    def get_extra_state(self) -> dict:
        """Saved with the weights: what they were trained on (plain data)."""
        return adapters.state(self.tuning) if self.learns else {}

    def set_extra_state(self, state: dict) -> None:
        if self.learns and state:
            adapters.check(state, self.tuning)

    def save_adapter(self, folder: str | Path) -> Path | None:
        """The tuned weights in peft's (or transformers') own folder format; None when nothing was tuned."""
        return adapters.save(self.tuning, folder) if self.learns else None


def _padded(rows: list[list[float]]) -> torch.Tensor:
    """(items, options) scores; an item with fewer options than another scores -inf for the ones it lacks."""
    out = torch.full((len(rows), max(len(r) for r in rows)), float("-inf"))
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.float)
    return out


def _head(rendered: RenderedPrompt, text: str) -> int:
    """How many leading characters of `text` (the plain prompt or its chat rendering) come before the item's
    own text: in a chat rendering, where the last user turn's content is found verbatim (its last occurrence)
    up to its own text; 0 where it is not."""
    if text == rendered.plain:
        return rendered.head
    turn = rendered.messages[-1]["content"]
    start = text.rfind(turn)
    return start + len(turn) - len(rendered.own) if start >= 0 else 0
