"""`model=llm`: an LLM (any `llm=` backend) in the place of a trained model, on the tasks' own data, metrics
and prediction files.

`PromptedLLM` reads `PromptItem`s (the data modules give them instead of token ids when the model says
`reads_prompts`) and
- as a chooser (`forward(items)`), returns one score per option, (batch, options), which the task reads as
  a trained model's logits (argmax: the choice; GRICE recovery: the candidates' ranking). `prompt.scoring`:
  `sum` | `per_token` | `per_byte`: the options' continuation log-likelihoods, summed or normalised
  (`choices.normalized`); `calibrated`: Zhao et al. 2021's contextual calibration by content-free inputs
  (`prompt.content_free`; `choices.calibrate`); `generate`: greedy generation read back by
  `prompting.parse_option`; the chosen option scores 0, the others -inf, and a reply that names no option
  gives a row of -inf (no answer: the tasks count it as wrong and report its share as `no_answer`);
- as a writer (`write(items)`), returns greedy free text (PragmatiCQA's spans and answer).

Demonstrations (`prompt.shots`) are drawn once from the training items (`demonstrate`), seeded: the same
for every item, so that they form one prefix computed once. The prompt is rendered through the backend's
chat template when `prompt.chat` and the backend can (`chat_text`), else as plain completion text.

Every model call goes through the response cache (`<cache_dir>/llm/responses.sqlite`): same config, same
numbers, without re-running the model. What each decision rests on is kept per item (`take_records`: the
text the model read, each option's continuation, log-likelihood, token and byte counts, the scores and the
choice) for predictions.jsonl. Nothing here learns (`learns_weights = False`): evaluation needs no
checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import nn

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt
from pragexp.generation.cache import CACHE_FILE, CachedBackend, ResponseCache
from pragexp.generation.choices import NORMALIZATIONS, ChoiceRequest, calibrate, normalized
from pragexp.prompting import PromptItem, PromptTemplate, RenderedPrompt, parse_option, pick_demonstrations
from pragexp.prompting.templates import load_templates

SCORINGS = (*NORMALIZATIONS, "calibrated", "generate")


class PromptedLLM(nn.Module):
    learns_weights = False  # evaluation without a checkpoint (TrainableTask)
    reads_prompts = True  # the data modules give PromptItems (data.prompts)

    def __init__(
        self,
        llm: LLMBackend,
        prompt: Mapping,
        cache_dir: str | None = None,
        use_cache: bool = True,
        reads_prompts: bool = True,
        **task_sizes,  # what tasks pass every model (num_labels, vocab_size, ...): an LLM needs none
    ):
        super().__init__()
        if not reads_prompts:
            raise ValueError("model=llm reads prompts: leave model.reads_prompts=true")
        if llm is None:
            raise ValueError("model=llm needs an LLM backend: llm=hf (default), vllm, openai or tiny")
        self.templates = load_templates(prompt["templates"])
        index = int(prompt.get("template", 0))
        if not 0 <= index < len(self.templates):
            raise ValueError(
                f"prompt.template={index}: this prompt group has templates 0..{len(self.templates) - 1}"
            )
        self.template: PromptTemplate = self.templates[index]
        self.shots, self.seed = int(prompt.get("shots", 0)), int(prompt.get("seed", 0))
        self.balanced, self.chat = bool(prompt.get("balanced", False)), bool(prompt.get("chat", True))
        self.scoring = str(prompt.get("scoring", "sum"))
        if self.scoring not in SCORINGS:
            raise ValueError(f"prompt.scoring={self.scoring}: choose one of {', '.join(SCORINGS)}")
        self.content_free_inputs = tuple(prompt.get("content_free", ("N/A",)))
        self.max_new_tokens = int(prompt.get("max_new_tokens", 16))
        self.num_labels = task_sizes.get("num_labels")
        if self.num_labels is not None and self.template.options is not None:
            if len(self.template.options) != int(self.num_labels):
                raise ValueError(
                    f"prompt template {self.template.name!r} verbalises {len(self.template.options)} labels, "
                    f"the data has {self.num_labels} (data.labels=strict needs the strict prompt group?)"
                )
        self.backend = llm
        self.cache_path = Path(cache_dir) / CACHE_FILE if cache_dir and use_cache else None
        self._cache: ResponseCache | None = None
        self.demonstrations: list[PromptItem] = []
        self._records: dict[int, dict] = {}

    @property
    def generates(self) -> bool:
        return self.scoring == "generate"

    # -- set-up -------------------------------------------------------------------------------------------
    def demonstrate(self, training_items: Sequence[PromptItem]) -> None:
        """Draw the `shots` demonstrations (none for 0-shot) from the training items."""
        self.demonstrations = pick_demonstrations(training_items, self.shots, self.seed, self.balanced)

    @property
    def llm(self) -> LLMBackend:
        """The backend behind the response cache (opened on first use, in the process that uses it)."""
        if self.cache_path is None:
            return self.backend
        if self._cache is None:
            self._cache = ResponseCache(self.cache_path)
        return CachedBackend(self.backend, self._cache)

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def describe(self) -> dict:
        """The settings a prediction record names."""
        return {"template": self.template.name, "shots": self.shots, "scoring": self.scoring}

    # -- rendering ----------------------------------------------------------------------------------------
    def text(self, rendered: RenderedPrompt, llm: LLMBackend) -> str:
        """What the model reads: the chat turns through its chat template, or the plain prompt."""
        if self.chat:
            chat = llm.chat_text(list(rendered.messages))
            if chat is not None:
                return chat
        return rendered.plain

    def _rendered(self, items: Sequence[PromptItem], generate: bool) -> list[RenderedPrompt]:
        return [self.template.render(item, self.demonstrations, generate=generate) for item in items]

    # -- choosing -----------------------------------------------------------------------------------------
    def forward(self, items: Sequence[PromptItem]) -> torch.Tensor:
        llm = self.llm
        rendered = self._rendered(items, generate=False)
        texts = [self.text(r, llm) for r in rendered]
        if self.generates:
            return self._choose_by_generation(items, rendered, texts, llm)
        requests = [ChoiceRequest(t, r.continuations) for t, r in zip(texts, rendered, strict=True)]
        content_free: list[list[ChoiceRequest]] = []
        if self.scoring == "calibrated":
            for item in items:
                cf = [self.template.content_free(item, token) for token in self.content_free_inputs]
                cf_rendered = [self.template.render(c, self.demonstrations) for c in cf]
                content_free.append([ChoiceRequest(self.text(r, llm), r.continuations) for r in cf_rendered])
        flat_cf = [r for row in content_free for r in row]
        answers = llm.loglikelihood_many([*requests, *flat_cf])
        scores, cf_scores = answers[: len(requests)], answers[len(requests) :]
        rows = []
        for i, (item, text, request, option_scores) in enumerate(
            zip(items, texts, requests, scores, strict=True)
        ):
            if content_free:
                n = len(self.content_free_inputs)
                values = calibrate(option_scores, cf_scores[i * n : (i + 1) * n])
            else:
                values = normalized(option_scores, self.scoring)
            rows.append(values)
            choice = max(range(len(values)), key=lambda j: (values[j], -j))
            self._records[item.index] = {
                **self.describe(),
                "prompt": text,
                "continuations": list(request.options),
                "loglik": [round(s.loglik, 6) for s in option_scores],
                "tokens": [s.tokens for s in option_scores],
                "bytes": [s.bytes for s in option_scores],
                "scores": [round(v, 6) for v in values],
                "choice": choice,
            }
            if content_free:
                self._records[item.index]["content_free_loglik"] = [
                    [round(s.loglik, 6) for s in cf] for cf in cf_scores[i * n : (i + 1) * n]
                ]
        return torch.tensor(rows, dtype=torch.float)

    def _choose_by_generation(self, items, rendered, texts, llm) -> torch.Tensor:
        replies = self._generate(texts, llm)
        rows = []
        for item, r, text, reply in zip(items, rendered, texts, replies, strict=True):
            choice = parse_option(reply, r.continuations)
            row = torch.full((len(r.continuations),), float("-inf"))
            if choice is not None:
                row[choice] = 0.0
            rows.append(row)
            self._records[item.index] = {
                **self.describe(),
                "prompt": text,
                "continuations": list(r.continuations),
                "reply": reply,
                "choice": choice,  # None: the reply names no option (no answer)
            }
        return torch.stack(rows)

    def _generate(self, texts: list[str], llm: LLMBackend) -> list[str]:
        params = GenerationParams(temperature=0.0, max_new_tokens=self.max_new_tokens)
        return [draws[0] for draws in llm.generate([Prompt(t, templated=True) for t in texts], params)]

    # -- writing ------------------------------------------------------------------------------------------
    def write(self, items: Sequence[PromptItem]) -> list[str]:
        """Greedy free text per item (a generation task: the demonstrations show their targets)."""
        llm = self.llm
        texts = [self.text(r, llm) for r in self._rendered(items, generate=True)]
        replies = self._generate(texts, llm)
        for item, text, reply in zip(items, texts, replies, strict=True):
            self._records[item.index] = {**self.describe(), "prompt": text, "reply": reply}
        return replies

    def take_records(self) -> dict[int, dict]:
        """The records of the items seen since the last call, by dataset index."""
        records, self._records = self._records, {}
        return records
