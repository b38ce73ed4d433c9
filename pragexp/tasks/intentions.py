"""The intentions story's tasks: does an LLM follow a speaker's true, non-literal intention? (Yerukola et al.
2024, on Hu et al. 2022's items; data: pragexp/data/intentions, prompts: conf/prompt/intentions_*.yaml,
judges: pragexp/data/intentions/judges.py and conf/judge/). Both are evaluation only, and their model is
`model=llm`, the one LLM route: its backend, response cache and prompt templates.

- `IntentionsReplyTask` (`task=intentions_reply`): the LLM replies to the non-literal utterance (the paper's
  generation prompt, plain or at a chain-of-thought level: `prompt.cot`, `samples` draws at each of
  `temperatures`); the judge decides whether each reply is closer to U2^T or to U2^L. Per item: `acc` = the
  share of its replies judged closer to U2^T over all temperatures and draws (the paper's figure: the average
  over temperatures), `acc/t<temperature>` per temperature, `undecided` = the share of verdicts that named
  neither reference, `no_reply` = the share of generations with no reply to judge (a chain-of-thought
  template's output without its reply marker, or nothing left after it). Such a generation is not shown to the
  judge and counts as not following the true intention (in `acc`'s denominator, verdict `no_reply` in
  predictions.jsonl): a model that never gets to its reply has not replied in line with the intention, and
  dropping those would reward it for failing the format.
- `IntentionsMCTask` (`task=intentions_mc`): a choice task like Circa's: the LLM picks the true intention out
  of two options (Hu et al.'s prompt, `prompt=intentions_mc`), scored by the one scorer, in both option orders
  (a model that always says "1" scores 50%). Per item: `acc` (mean over the orders), `p_true` (the probability
  of the right option, the option scores renormalised over the options, mean over the orders) and each figure
  of every LLM choice task (`CHOICE_FIGURES` of `pragexp.metrics.choice_figures`: the Brier score, `brier`),
  computed per order by the hook's own function exactly as `ChoiceMetric` computes it, then averaged over the
  orders like `p_true` (over the orders that have one: a generated reply naming no option has none; an item
  with none is left out of the figure's means). Generating (`prompt.scoring=generate`), its `unparsed`,
  `forced`, `reasoning_tokens` (and `extracted`) are per item the share or mean over its orders, reported as
  every generating task's (`metrics.generation`).

Metrics are per item and exact under DDP (PragexpTask); `test/count` counts items.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import torch
from torch import nn

from pragexp.batches.types import PromptBatch, PromptItems
from pragexp.generation.backends.base import GenerationParams
from pragexp.generation.ranking import chosen
from pragexp.metrics import choice_figures
from pragexp.metrics.choice_figures import ChoiceFigure
from pragexp.metrics.generation import FIELDS as GENERATION_FIELDS
from pragexp.prompting import PromptItem, PromptTemplate, extract_reply
from pragexp.prompting.items import JudgeRequest
from pragexp.prompting.parsing import INVALID, NEITHER, NO_REPLY, TRUE
from pragexp.tasks.base import PragexpTask
from pragexp.tasks.contracts import PromptData, PromptedModel, TaskData
from pragexp.tasks.llm_choice import option_probabilities


class IntentionsData(TaskData, PromptData, Protocol):
    """The phenomena as groups, and the items as the prompts read them (batches' `inputs["items"]`)."""


class Replier(PromptedModel, Protocol):
    """What the reply task asks of its model (`model=llm`)."""

    template: PromptTemplate  # its `reply_marker` says where a reply starts after the model's reasoning

    def draw(self, items: Sequence[PromptItem], params: GenerationParams) -> list[list[str]]: ...


def temperature_key(temperature: float) -> str:
    return f"acc/t{float(temperature):g}"


class IntentionsReplyTask(PragexpTask):
    data_contract = IntentionsData
    batch_types = (PromptBatch,)

    def __init__(
        self,
        model: Callable[..., nn.Module],
        judge,
        temperatures: Sequence[float] = (0.3, 0.5),
        samples: int = 1,
        max_new_tokens: int = 30,
        reasoning_tokens: int = 120,
        seed: int = 0,
    ):
        super().__init__(model)
        self.judge = judge  # its backend behind the response cache, as the model's (`judge.cache_dir`)
        self.temperatures = [float(t) for t in temperatures]
        if not self.temperatures or int(samples) < 1:
            raise ValueError("task.temperatures needs at least one temperature and task.samples >= 1")
        self.samples, self.seed = int(samples), int(seed)
        self.max_new_tokens, self.reasoning_tokens = int(max_new_tokens), int(reasoning_tokens)
        self.score_names = ("acc", *(temperature_key(t) for t in self.temperatures), "undecided", "no_reply")

    def build_network(self, datamodule: IntentionsData) -> nn.Module:
        return self.build_prompted(datamodule, Replier)

    @property
    def replier(self) -> Replier:
        return self.prompted

    def evaluate_batch(self, stage: str, batch: PromptBatch) -> dict:
        items: list[PromptItem] = batch["inputs"]["items"]
        marker = self.replier.template.reply_marker
        # A template that reasons before its reply gets the reasoning's budget on top of the reply's.
        budget = self.max_new_tokens + (self.reasoning_tokens if marker else 0)
        per_item: list[list[dict]] = [[] for _ in items]
        requests, judged = [], []  # judged[k]: the reply record that requests[k] asks about
        for temperature in self.temperatures:
            params = GenerationParams(temperature, budget, samples=self.samples, seed=self.seed)
            for i, draws in enumerate(self.replier.draw(items, params)):
                for sample, raw in enumerate(draws):
                    reply = extract_reply(raw, marker, items[i].fields["listener"])
                    record = {"temperature": temperature, "sample": sample, "reply": reply, "raw": raw}
                    per_item[i].append(record)
                    if not reply:  # nothing to judge: see the module's docstring
                        record["verdict"] = NO_REPLY
                        continue
                    judged.append(record)
                    requests.append(JudgeRequest(items[i], reply, (items[i].index, temperature, sample)))
        for record, verdict in zip(judged, self.judge(requests), strict=True):
            record.update(verdict=verdict.choice, **verdict.detail)
        prompts = dict(self.replier.take_records())
        scores = self._scores(per_item)
        out: dict = {name: torch.tensor(values, dtype=torch.float) for name, values in scores.items()}
        out["_records"] = [
            {"index": item.index, "prompt": prompts[item.index]["prompt"], "acc": acc, "replies": replies}
            for item, acc, replies in zip(items, scores["acc"], per_item, strict=True)
        ]
        return out

    def _scores(self, per_item: list[list[dict]]) -> dict[str, list[float]]:
        scores: dict[str, list[float]] = {name: [] for name in self.score_names}
        for replies in per_item:
            scores["acc"].append(_share(replies, TRUE))
            scores["undecided"].append(_share(replies, NEITHER) + _share(replies, INVALID))
            scores["no_reply"].append(_share(replies, NO_REPLY))
            for t in self.temperatures:
                scores[temperature_key(t)].append(_share([r for r in replies if r["temperature"] == t], TRUE))
        return scores

    def prediction_records(self, batch: PromptBatch, scores: dict) -> list[dict]:
        return scores["_records"]


def _share(replies: list[dict], choice: str) -> float:
    return sum(r["verdict"] == choice for r in replies) / len(replies) if replies else 0.0


def option_orders(item: PromptItem) -> list[PromptItem]:
    """The item with its options in every rotation (two options: both orders), the gold label following."""
    n = len(item.options)
    return [
        PromptItem(item.index, item.fields, item.options[k:] + item.options[:k], (item.label - k) % n)
        for k in range(n)
    ]


class IntentionsMCTask(PragexpTask):
    data_contract = IntentionsData
    batch_types = (PromptBatch,)

    def __init__(self, model: Callable[..., nn.Module], figures: Sequence[ChoiceFigure] | None = None):
        super().__init__(model)
        self.figures = choice_figures.figures(figures)  # None: every LLM choice task's (`CHOICE_FIGURES`)
        self.score_names = ("acc", "p_true", *(figure.name for figure in self.figures))

    def build_network(self, datamodule: IntentionsData) -> nn.Module:
        return self.build_prompted(datamodule)

    def evaluate_batch(self, stage: str, batch: PromptBatch) -> dict:
        views = [view for item in batch["inputs"]["items"] for view in option_orders(item)]
        scores = self.net(views)
        predicted = chosen(scores)
        probs = option_probabilities(scores)
        model_records = [record for _, record in self.prompted.take_records()]
        orders: dict[int, list[dict]] = {}
        for v, view in enumerate(views):
            continuations = model_records[v]["continuations"]
            orders.setdefault(view.index, []).append(
                {
                    "true_option": continuations[view.label],
                    "predicted": continuations[int(predicted[v])] if predicted[v] >= 0 else None,
                    "correct": bool(predicted[v] == view.label),
                    "p_true": float(probs[v, view.label]),
                    **model_records[v],
                }
            )
        records, unit_of = [], dict(zip(batch["index"].tolist(), batch["cluster"].tolist(), strict=True))
        for index, per_order in orders.items():
            acc = sum(o["correct"] for o in per_order) / len(per_order)
            p_true = sum(o["p_true"] for o in per_order) / len(per_order)
            summary = _generation_summary(per_order)
            records.append({"index": index, "acc": acc, "p_true": p_true, **summary, "orders": per_order})
            if self.answer_metrics is not None:  # the model's records were taken here, not by the loop
                self.answer_metrics[stage].update(
                    {index: summary}, torch.tensor([index]), torch.tensor([unit_of[index]])
                )
        figures = self._order_figures(batch, views, probs, predicted)
        return {
            "acc": torch.tensor([r["acc"] for r in records], dtype=torch.float),
            "p_true": torch.tensor([r["p_true"] for r in records], dtype=torch.float),
            **{name: _order_means(views, values) for name, values in figures.items()},
            "_records": records,
        }

    def _order_figures(self, batch: PromptBatch, views: list[PromptItem], probs, predicted) -> dict:
        """Each figure per view (an item in one option order), from what `ChoiceMetric` would take: the
        batch's rows repeated once per order, each with its order's label, and the orders' `ChoiceScores`."""
        probs, predicted = probs.cpu(), predicted.cpu()
        counts = torch.tensor([len(item.options) for item in batch["inputs"]["items"]])
        repeated = {
            key: batch[key].cpu().repeat_interleave(counts)
            for key in ("index", "cluster", "group", "view", "people_correct")
        }
        for key in ("kinds", "reference", "groups"):
            repeated[key] = [
                value for value, n in zip(batch[key], counts.tolist(), strict=True) for _ in range(n)
            ]
        label = torch.tensor([view.label for view in views])
        rows = PromptBatch(**repeated, label=label, inputs={"items": PromptItems(views)})
        return choice_figures.plain_choice_figures(rows, probs, predicted, self.figures)

    def prediction_records(self, batch: PromptBatch, scores: dict) -> list[dict]:
        return scores["_records"]


def _order_means(views: list[PromptItem], values: torch.Tensor) -> torch.Tensor:
    """Per item (in the order of their first view), the mean of a figure over its orders that have one (NaN:
    a generated reply that named no option); NaN where none has."""
    per_item: dict[int, list[float]] = {}
    for view, value in zip(views, values.tolist(), strict=True):
        per_item.setdefault(view.index, [])
        if not math.isnan(value):
            per_item[view.index].append(value)
    means = [sum(kept) / len(kept) if kept else math.nan for kept in per_item.values()]
    return torch.tensor(means, dtype=torch.float)


def _generation_summary(orders: list[dict]) -> dict[str, float]:
    """A generating model's figures for one item (`unparsed`, `forced`, ...): the share or mean over its
    orders; empty for a model that scores options."""
    return {
        name: sum(float(o.get(name) or 0) for o in orders) / len(orders)
        for name in GENERATION_FIELDS
        if any(name in o for o in orders)
    }
