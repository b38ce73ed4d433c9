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
choice) for predictions.jsonl.

Fine-tuning (`llm.finetune=lora|full`, `pragexp.train`, an in-process backend: `llm=hf`): the model becomes
the submodule `lm`, and training scores the options exactly as evaluation does (`choices.option_logliks`,
normalised by `prompt.scoring`), so the task's cross-entropy over the option scores trains what evaluation
ranks; a writer (PragmatiCQA) learns its target text (`target_nll`). Checkpoints hold only what trained (the
LoRA adapters; every weight for `full`) plus the base model's identity (`llm.base_identity()`: name, revision,
weights digest), checked when loaded; `save_adapter` writes peft's own folder (`adapter_config.json`,
`adapter_model.safetensors`). A tuned model's answers are not cached (its weights change). Frozen
(`llm.finetune=none`, the default) nothing learns: evaluation needs no checkpoint.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import nn

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt
from pragexp.generation.cache import CACHE_FILE, CachedBackend, ResponseCache
from pragexp.generation.choices import NORMALIZATIONS, ChoiceRequest, calibrate, normalized, option_logliks
from pragexp.prompting import PromptItem, PromptTemplate, RenderedPrompt, parse_option, pick_demonstrations
from pragexp.prompting.templates import load_templates

SCORINGS = (*NORMALIZATIONS, "calibrated", "generate")


class PromptedLLM(nn.Module):
    reads_prompts = True  # the data modules give PromptItems (data.prompts)

    @staticmethod
    def learns_weights(llm=None, **_) -> bool:
        """Whether this configuration trains (`llm.finetune` lora or full), so that evaluating it needs its
        checkpoint (TrainableTask reads this before the model is built)."""
        return getattr(llm, "finetune", "none") != "none"

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
        self.finetune = getattr(llm, "finetune", "none")
        self.register_buffer("_anchor", torch.zeros(0), persistent=False)  # where Lightning put the module
        if self.finetune != "none":
            if not callable(getattr(llm, "trainable_model", None)):
                raise ValueError(
                    f"llm.finetune={self.finetune} trains an in-process model: use llm=hf (not {llm.name})"
                )
            self.lm = llm.trainable_model()  # registered: Lightning moves, wraps (DDP) and optimises it
            use_cache = False  # the answers change as the weights do
            self.register_state_dict_post_hook(_keep_what_trains)
            self.register_load_state_dict_pre_hook(_remember_prefix)
            self.register_load_state_dict_post_hook(_frozen_base_is_not_missing)
        self.cache_path = Path(cache_dir) / CACHE_FILE if cache_dir and use_cache else None
        self._cache: ResponseCache | None = None
        self.demonstrations: list[PromptItem] = []
        self._records: dict[int, dict] = {}
        self._load_prefix = ""

    @property
    def learns(self) -> bool:
        """Whether the LLM's weights train here (`llm.finetune` lora or full)."""
        return self.finetune != "none"

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
        if self.learns and torch.is_grad_enabled():
            return self._trained_scores(items)
        return self._scores(items).to(self._anchor.device)

    def _trained_scores(self, items: Sequence[PromptItem]) -> torch.Tensor:
        """(batch, options) option scores with gradients, as `_scores` computes them in evaluation."""
        if self.scoring not in NORMALIZATIONS:
            raise ValueError(
                f"fine-tuning ranks the options by their log-likelihood: prompt.scoring=sum, per_token or "
                f"per_byte, not {self.scoring}"
            )
        _, tokenizer = self.backend.load()
        rendered = self._rendered(items, generate=False)
        requests = [ChoiceRequest(self.text(r, self.backend), r.continuations) for r in rendered]
        rows = []
        for values, counts in option_logliks(self.lm, tokenizer, requests, self.backend.batch_size):
            if self.scoring == "per_token":
                values = values / values.new_tensor([c.tokens for c in counts])
            elif self.scoring == "per_byte":
                values = values / values.new_tensor([max(c.bytes, 1) for c in counts])
            rows.append(values)
        return torch.stack(rows).to(self._anchor.device)

    def _scores(self, items: Sequence[PromptItem]) -> torch.Tensor:
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

    def target_nll(
        self, items: Sequence[PromptItem], targets: Sequence[str]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per item: the summed negative log-likelihood of its target text after its generation prompt, closed
        by the end-of-text token (so that a tuned model learns to stop), and the number of target tokens
        (a writer's training loss and dev perplexity: PragmatiCQA's spans and answer). Tuned models only."""
        if not self.learns:
            raise ValueError("target_nll needs the model in process: llm.finetune=lora or full")
        _, tokenizer = self.backend.load()
        end = tokenizer.eos_token or ""
        texts = [self.text(r, self.backend) for r in self._rendered(items, generate=True)]
        requests = [ChoiceRequest(t, (target + end,)) for t, target in zip(texts, targets, strict=True)]
        scored = option_logliks(self.lm, tokenizer, requests, self.backend.batch_size)
        nll = torch.stack([-values[0] for values, _ in scored]).to(self._anchor.device)
        tokens = torch.tensor([counts[0].tokens for _, counts in scored], device=self._anchor.device)
        return nll, tokens

    # -- checkpoints ----------------------------------------------------------------------------------------
    def get_extra_state(self) -> dict:
        """Saved with the weights: what they were trained on (plain data)."""
        if self.finetune == "none":
            return {}
        return {"finetune": self.finetune, "lora": self.backend.lora, "base": self.backend.base_identity()}

    def set_extra_state(self, state: dict) -> None:
        if self.finetune == "none" or not state:
            return
        saved, here = state.get("base"), self.backend.base_identity()
        if saved != here:
            raise ValueError(
                f"this checkpoint's weights were trained on the base model {saved}, and llm= loads {here}: "
                "fine-tuned weights only fit the base they were trained on"
            )
        if state.get("finetune") != self.finetune:
            raise ValueError(f"this checkpoint was trained with llm.finetune={state.get('finetune')}")

    def save_adapter(self, folder: str | Path) -> Path | None:
        """The tuned weights in the format transformers, peft and vLLM load as they are: peft's adapter folder
        (lora), or a transformers model folder with its tokenizer (full). Written to a temporary folder and
        renamed. None when nothing was tuned."""
        if self.finetune == "none":
            return None
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            self.lm.save_pretrained(tmp)
            if self.finetune == "full":
                self.backend.load()[1].save_pretrained(tmp)
            if folder.exists():
                shutil.rmtree(folder)
            tmp.rename(folder)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        return folder

    def take_records(self) -> dict[int, dict]:
        """The records of the items seen since the last call, by dataset index."""
        records, self._records = self._records, {}
        return records


# -- what a fine-tuned checkpoint holds: the weights that train (LoRA: the adapters), not the frozen base -----


def _trained_names(module: PromptedLLM) -> set[str]:
    return {f"lm.{n}" for n, p in module.lm.named_parameters() if p.requires_grad}


def _keep_what_trains(module: PromptedLLM, state_dict: dict, prefix: str, local_metadata) -> None:
    trained = _trained_names(module)
    for key in [k for k in state_dict if k.startswith(prefix + "lm.")]:
        if key[len(prefix) :] not in trained:
            del state_dict[key]


def _remember_prefix(module: PromptedLLM, state_dict, prefix: str, *args) -> None:
    module._load_prefix = prefix


def _frozen_base_is_not_missing(module: PromptedLLM, incompatible) -> None:
    """The frozen base comes from `llm.model`, not from the checkpoint: its keys are not missing."""
    prefix, trained = module._load_prefix, _trained_names(module)
    incompatible.missing_keys[:] = [
        k
        for k in incompatible.missing_keys
        if not (k.startswith(prefix + "lm.") and k[len(prefix) :] not in trained)
    ]
