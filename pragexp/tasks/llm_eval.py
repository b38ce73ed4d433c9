"""Evaluation-only LLM tasks on the intention items (Yerukola et al. 2024; Hu et al. 2022).

- `LLMResponseEvalTask` (`task=llm_response_eval`): the LLM replies to the non-literal utterance
  (the paper's generation prompt, plain or at a chain-of-thought level, `samples` draws at each of
  `temperatures`); the judge decides whether each reply is closer to U2^T or to U2^L. Per item:
  `acc` = the share of its replies judged closer to U2^T over all temperatures and draws (the paper's
  figure: the average over temperatures), `acc/t<temperature>` per temperature, `undecided` = the
  share of verdicts that named neither reference, `no_reply` = the share of generations with no reply
  to judge (a chain-of-thought level's output without "Response:", or nothing left after it). Such a
  generation is not shown to the judge and counts as not following the true intention (in `acc`'s
  denominator, verdict `no_reply` in predictions.jsonl): a model that never gets to its reply has not
  replied in line with the intention, and dropping those would reward it for failing the format.
- `LLMIntentMCTask` (`task=llm_intent_mc`): the LLM picks the true intention out of two options by the
  probability of each label after "Answer:", renormalised over the labels, in both option orders.
  Per item: `acc` (mean over the two orders), `p_true` (the renormalised probability of the right label).
  The prompt is scored as raw text (no chat template), as lm-evaluation-harness does by default.

Every model call goes through the response cache (`<cache_dir>/llm/responses.sqlite`). Metrics are
per item and exact under DDP (PragexpTask); `test/count` counts items.
"""

from __future__ import annotations

from pathlib import Path

import torch

from pragexp.generation.backend import GenerationParams, LLMBackend, Prompt
from pragexp.generation.cache import CACHE_FILE, CachedBackend, ResponseCache
from pragexp.generation.judges import INVALID, NEITHER, NO_REPLY, TRUE, JudgeRequest
from pragexp.generation.prompts import (
    REASONING_LEVELS,
    extract_reply,
    generation_prompt,
    mc_prompt,
    parse_cot,
)
from pragexp.tasks.base import PragexpTask, TaskData


def temperature_key(temperature: float) -> str:
    return f"acc/t{float(temperature):g}"


class LLMTask(PragexpTask):
    """What both tasks share: no network of their own, backends behind one response cache. Of the data
    module they read only what every task does (`TaskData`: the phenomena as groups); the items themselves
    come in the batches (`batch["items"]`)."""

    def __init__(self, llm: LLMBackend, cache_dir: str | None = None, use_cache: bool = True):
        super().__init__(model=None)
        self.llm_backend = llm
        self.cache_path = Path(cache_dir) / CACHE_FILE if cache_dir and use_cache else None
        self.cache: ResponseCache | None = None

    def cached(self, backend: LLMBackend) -> LLMBackend:
        if self.cache_path is None:
            return backend
        if self.cache is None:
            self.cache = ResponseCache(self.cache_path)
        return CachedBackend(backend, self.cache)

    def build_network(self, datamodule: TaskData) -> None:
        self.llm_backend = self.cached(self.llm_backend)
        return None

    def teardown(self, stage: str) -> None:
        if self.cache is not None:
            self.cache.close()
            self.cache = None


class LLMResponseEvalTask(LLMTask):
    def __init__(
        self,
        llm: LLMBackend,
        judge,
        prompt: dict | None = None,
        temperatures: list[float] = (0.3, 0.5),
        samples: int = 1,
        max_new_tokens: int = 30,
        reasoning_tokens: int = 120,
        seed: int = 0,
        cache_dir: str | None = None,
        use_cache: bool = True,
    ):
        super().__init__(llm, cache_dir, use_cache)
        self.judge = judge
        self.cot = parse_cot((prompt or {}).get("cot"))
        self.temperatures = [float(t) for t in temperatures]
        if not self.temperatures or int(samples) < 1:
            raise ValueError("task.temperatures needs at least one temperature and task.samples >= 1")
        self.samples, self.seed = int(samples), int(seed)
        # Reasoning levels write a thought before the reply: they get the reply's budget on top.
        self.max_new_tokens = int(max_new_tokens) + (
            int(reasoning_tokens) if self.cot in REASONING_LEVELS else 0
        )
        self.score_names = ("acc", *(temperature_key(t) for t in self.temperatures), "undecided", "no_reply")

    def build_network(self, datamodule: TaskData) -> None:
        super().build_network(datamodule)
        self.judge.backend = self.cached(self.judge.backend)
        return None

    def evaluate_batch(self, stage: str, batch: dict) -> dict[str, torch.Tensor]:
        items, indices = batch["items"], [int(i) for i in batch["index"]]
        prompts = [
            Prompt(
                generation_prompt(item, self.cot),
                {"reply_true": item.reply_true, "reply_literal": item.reply_literal},
            )
            for item in items
        ]
        per_item: list[list[dict]] = [[] for _ in items]
        requests, judged = [], []  # judged[k]: the reply record that requests[k] asks about
        for temperature in self.temperatures:
            params = GenerationParams(temperature, self.max_new_tokens, samples=self.samples, seed=self.seed)
            for i, draws in enumerate(self.llm_backend.generate(prompts, params)):
                for sample, raw in enumerate(draws):
                    reply = extract_reply(raw, items[i].listener, self.cot)
                    record = {"temperature": temperature, "sample": sample, "reply": reply, "raw": raw}
                    per_item[i].append(record)
                    if not reply:  # nothing to judge: see the module's docstring
                        record["verdict"] = NO_REPLY
                        continue
                    judged.append(record)
                    requests.append(JudgeRequest(items[i], reply, (indices[i], temperature, sample)))
        for record, verdict in zip(judged, self.judge(requests), strict=True):
            record.update(verdict=verdict.choice, **verdict.detail)
        scores: dict[str, list[float]] = {name: [] for name in self.score_names}
        for replies in per_item:
            scores["acc"].append(_share(replies, TRUE))
            scores["undecided"].append(_share(replies, NEITHER) + _share(replies, INVALID))
            scores["no_reply"].append(_share(replies, NO_REPLY))
            for t in self.temperatures:
                scores[temperature_key(t)].append(_share([r for r in replies if r["temperature"] == t], TRUE))
        out = {name: torch.tensor(values, dtype=torch.float) for name, values in scores.items()}
        out["_records"] = [
            {"index": index, "prompt": prompt.text, "acc": acc, "replies": replies}
            for index, prompt, acc, replies in zip(indices, prompts, scores["acc"], per_item, strict=True)
        ]
        return out

    def prediction_records(self, batch: dict, scores: dict) -> list[dict]:
        return scores["_records"]


def _share(replies: list[dict], choice: str) -> float:
    return sum(r["verdict"] == choice for r in replies) / len(replies) if replies else 0.0


class LLMIntentMCTask(LLMTask):
    score_names = ("acc", "p_true")

    def __init__(
        self,
        llm: LLMBackend,
        labels: list[str] = ("1", "2"),
        cache_dir: str | None = None,
        use_cache: bool = True,
    ):
        super().__init__(llm, cache_dir, use_cache)
        self.labels = [str(label) for label in labels]
        if len(self.labels) != 2 or len(set(self.labels)) != 2:
            raise ValueError(f"task.labels must be two different labels, got {self.labels}")

    def evaluate_batch(self, stage: str, batch: dict) -> dict[str, torch.Tensor]:
        accs, p_trues, records = [], [], []
        for index, item in zip(batch["index"], batch["items"], strict=True):
            orders = []
            for true_at in (0, 1):  # both option orders: a model that always says "1" scores 50%
                options = [item.true_intention, item.literal_intention]
                if true_at == 1:
                    options.reverse()
                context = mc_prompt(item, options)
                logliks = torch.tensor(
                    self.llm_backend.loglikelihood(context, self.labels), dtype=torch.float
                )
                probs = torch.softmax(logliks, dim=0)  # renormalised over the labels
                predicted = int(torch.argmax(logliks))
                orders.append(
                    {
                        "true_option": self.labels[true_at],
                        "predicted": self.labels[predicted],
                        "correct": predicted == true_at,
                        "p_true": float(probs[true_at]),
                        "loglik": [round(float(x), 6) for x in logliks],
                    }
                )
            accs.append(sum(o["correct"] for o in orders) / len(orders))
            p_trues.append(sum(o["p_true"] for o in orders) / len(orders))
            records.append({"index": int(index), "acc": accs[-1], "p_true": p_trues[-1], "orders": orders})
        return {
            "acc": torch.tensor(accs, dtype=torch.float),
            "p_true": torch.tensor(p_trues, dtype=torch.float),
            "_records": records,
        }

    def prediction_records(self, batch: dict, scores: dict) -> list[dict]:
        return scores["_records"]
