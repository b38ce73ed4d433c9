"""Judges: is a generated reply closer to the reference reply under the true intention (U2^T) or under
the literal one (U2^L)?

- `EmbeddingJudge` (`judge=embedding`, `judge=llm2vec`): cosine similarity of the reply's embedding with
  U2^T's and U2^L's, without the context. The paper computes it with LLM2Vec; here the encoder is what the
  backend is: all-MiniLM-L6-v2 offline (`judge=embedding`, a small sentence encoder), any encoder or an
  LLM's mean-pooled hidden states (`HFBackend.embed`, a causal LM not trained to embed), or a real LLM2Vec
  model through the llm2vec package (`judge=llm2vec`, `encoder.LLM2VecBackend`).
- `LLMJudge` (`judge=llm`, `judge=gpt4`): the paper's contextual-similarity prompt (Appendix A.4) at
  temperature 0, the two references as options 1 and 2 in an order drawn by a seeded RNG per reply;
  the answer is parsed leniently, and one that names no option ("neither", or nothing readable) is
  counted, never fatal.

Both take `JudgeRequest`s and return one `Verdict` per request: `choice` is true, literal, neither or
invalid, `detail` what the decision rests on (similarities, the options' order and the raw answer).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt, draw_seed
from pragexp.generation.prompts import judge_prompt, parse_choice

TRUE, LITERAL, NEITHER, INVALID = "true", "literal", "neither", "invalid"
NO_REPLY = "no_reply"  # set by the task, never by a judge: the generation held no reply to judge


@dataclass(frozen=True)
class JudgeRequest:
    item: object  # an IntentionItem
    reply: str
    key: tuple = ()  # (dataset index, temperature, sample): seeds the option order


@dataclass
class Verdict:
    choice: str
    detail: dict = field(default_factory=dict)


class EmbeddingJudge:
    name = "embedding"

    def __init__(self, backend: LLMBackend):
        self.backend = backend

    def __call__(self, requests: list[JudgeRequest]) -> list[Verdict]:
        if not requests:
            return []
        texts = []
        for r in requests:
            texts += [r.reply, r.item.reply_true, r.item.reply_literal]
        vectors = self.backend.embed(texts).reshape(len(requests), 3, -1)
        verdicts = []
        for v in vectors:
            sim_true, sim_literal = float(v[0] @ v[1]), float(v[0] @ v[2])
            choice = TRUE if sim_true > sim_literal else LITERAL if sim_literal > sim_true else NEITHER
            verdicts.append(
                Verdict(choice, {"sim_true": round(sim_true, 6), "sim_literal": round(sim_literal, 6)})
            )
        return verdicts


class LLMJudge:
    name = "llm"

    def __init__(self, backend: LLMBackend, seed: int = 0, max_new_tokens: int = 5, contextual: bool = True):
        self.backend, self.seed = backend, int(seed)
        self.max_new_tokens, self.contextual = int(max_new_tokens), contextual

    def true_first(self, key: tuple) -> bool:
        """The seeded coin that puts U2^T first or second for one reply (the same on every run)."""
        return random.Random(draw_seed(self.seed, 0, [repr(key)])).random() < 0.5

    def __call__(self, requests: list[JudgeRequest]) -> list[Verdict]:
        prompts, orders = [], []
        for r in requests:
            first_true = self.true_first(r.key)
            first, second = (
                (r.item.reply_true, r.item.reply_literal)
                if first_true
                else (r.item.reply_literal, r.item.reply_true)
            )
            prompts.append(Prompt(judge_prompt(r.item, r.reply, first, second, self.contextual)))
            orders.append({"1": TRUE, "2": LITERAL} if first_true else {"1": LITERAL, "2": TRUE})
        params = GenerationParams(temperature=0.0, max_new_tokens=self.max_new_tokens, seed=self.seed)
        answers = [a[0] for a in self.backend.generate(prompts, params)] if prompts else []
        verdicts = []
        for answer, order in zip(answers, orders, strict=True):
            parsed = parse_choice(answer)
            choice = order[parsed] if parsed in order else NEITHER if parsed == "neither" else INVALID
            verdicts.append(Verdict(choice, {"answer": answer, "option_1": order["1"]}))
        return verdicts
