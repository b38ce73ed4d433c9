"""Judges: is a generated reply closer to the reference reply under the true intention (U2^T) or under
the literal one (U2^L)?

- `EmbeddingJudge` (`judge=embedding`, `judge=llm2vec`): cosine similarity of the reply's embedding with
  U2^T's and U2^L's, without the context. The paper computes it with LLM2Vec; here the encoder is what the
  backend is: all-MiniLM-L6-v2 offline (`judge=embedding`, a small sentence encoder), any encoder or an
  LLM's mean-pooled hidden states (`HFBackend.embed`, a causal LM not trained to embed), or a real LLM2Vec
  model through the llm2vec package (`judge=llm2vec`, `generation.backends.encoder.LLM2VecBackend`).
- `LLMJudge` (`judge=llm`, `judge=gpt4`): the paper's contextual-similarity prompt (Appendix A.4; a prompt
  template of conf/judge/_contextual_similarity.yaml, contextual or not) at temperature 0, the two references
  as options 1 and 2 in an order drawn by a seeded RNG per reply; the answer is parsed leniently
  (`prompting.parse_choice`), and one that names no option ("neither", or nothing readable) is counted, never
  fatal.

Each asks its backend through the response cache as the model does (`generation.cache.cached_backend.cached`,
with the judge config's `cache_dir` and `use_cache`). Both take `JudgeRequest`s (the item as the prompts see
it: a `PromptItem` whose `references` hold U2^T as `reply_true` and U2^L as `reply_literal`) and return one
`Verdict` per request: `choice` is true, literal, neither or invalid, `detail` what the decision rests on
(similarities, the options' order and the raw answer). Part of the intentions story (task=intentions_reply:
pragexp/tasks/intentions.py).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pragexp.generation.backends.base import GenerationParams, LLMBackend, Prompt, draw_seed
from pragexp.generation.cache.cached_backend import cached
from pragexp.prompting import PromptItem, load_templates, parse_choice, select_template
from pragexp.prompting.items import JudgeRequest
from pragexp.prompting.parsing import INVALID, LITERAL, NEITHER, TRUE


@dataclass
class Verdict:
    choice: str
    detail: dict = field(default_factory=dict)


class Judge:
    """A judge's backend, behind the response cache (none without a `cache_dir`, or with `use_cache` off)."""

    def __init__(self, backend: LLMBackend, cache_dir: str | None = None, use_cache: bool = True):
        self.backend = cached(backend, cache_dir, use_cache)


class EmbeddingJudge(Judge):
    name = "embedding"

    def __call__(self, requests: list[JudgeRequest]) -> list[Verdict]:
        if not requests:
            return []
        texts = []
        for r in requests:
            texts += [r.reply, r.item.references["reply_true"], r.item.references["reply_literal"]]
        vectors = self.backend.embed(texts).reshape(len(requests), 3, -1)
        verdicts = []
        for v in vectors:
            sim_true, sim_literal = float(v[0] @ v[1]), float(v[0] @ v[2])
            choice = TRUE if sim_true > sim_literal else LITERAL if sim_literal > sim_true else NEITHER
            verdicts.append(
                Verdict(choice, {"sim_true": round(sim_true, 6), "sim_literal": round(sim_literal, 6)})
            )
        return verdicts


class LLMJudge(Judge):
    name = "llm"

    def __init__(
        self,
        backend: LLMBackend,
        templates: Sequence[Mapping],
        seed: int = 0,
        max_new_tokens: int = 5,
        contextual: bool = True,
        cache_dir: str | None = None,
        use_cache: bool = True,
    ):
        super().__init__(backend, cache_dir, use_cache)
        self.seed = int(seed)
        self.max_new_tokens, self.contextual = int(max_new_tokens), contextual
        # The A.4 prompt with the story and the true intention, or without them (the paper's variant).
        self.template = select_template(
            load_templates(templates), "contextual" if contextual else "non_contextual"
        )

    def true_first(self, key: tuple) -> bool:
        """The seeded coin that puts U2^T first or second for one reply (the same on every run)."""
        return random.Random(draw_seed(self.seed, 0, [repr(key)])).random() < 0.5

    def __call__(self, requests: list[JudgeRequest]) -> list[Verdict]:
        prompts, orders = [], []
        for r in requests:
            first_true = self.true_first(r.key)
            true, literal = r.item.references["reply_true"], r.item.references["reply_literal"]
            options = (true, literal) if first_true else (literal, true)
            shown = PromptItem(r.item.index, {**r.item.fields, "reply": r.reply}, options)
            prompts.append(Prompt(self.template.user_text(shown)))
            orders.append({"1": TRUE, "2": LITERAL} if first_true else {"1": LITERAL, "2": TRUE})
        params = GenerationParams(temperature=0.0, max_new_tokens=self.max_new_tokens, seed=self.seed)
        answers = [a[0] for a in self.backend.generate(prompts, params)] if prompts else []
        verdicts = []
        for answer, order in zip(answers, orders, strict=True):
            parsed = parse_choice(answer)
            choice = order[parsed] if parsed in order else NEITHER if parsed == "neither" else INVALID
            verdicts.append(Verdict(choice, {"answer": answer, "option_1": order["1"]}))
        return verdicts
