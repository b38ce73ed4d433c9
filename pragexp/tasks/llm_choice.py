"""`LLMChoiceTask`: an LLM (`model=llm`) choosing among each item's options, the task of every benchmark that
is a data package and a prompt group (Hu et al.'s phenomena: task=hu_pragmatics; LUDWIG: task=ludwig;
BIG-bench's implicatures: task=bigbench_implicatures). Evaluation only; the model scores the options through
the one route (backend, response cache, scorer, prompt templates) and the task reads its scores as a
classifier's logits.

Metrics (`pragexp.metrics.choice.ChoiceMetric`): accuracy, a tie read by the protocol's rule (`ties`: `first`,
the first of the tied options is chosen, numpy's argmax as Hu et al. and lm-evaluation-harness read it;
`wrong`, the true option must score strictly higher, LUDWIG's code for API models), the probability of the
true option, per group (phenomenon, implicature type; an example in several groups counts in each), per view
and their spread (Hu et al.'s option-order seeds), the share of errors by the chosen option's kind, the share
of each option position chosen (where the data module names them), and the comparison with people (across
items, Hu et al.'s; within an item, over its options), from what the data module declares (`ChoiceData`);
where it declares sets of examples (`joint_sets`, `f1_sets`: BigToM's true-and-false-belief pairs, Hi-ToM's
joint accuracy over a story's orders, OpenToM's macro-F1 per genre over batches of stories), their figures
(`pragexp.metrics.item_sets`); each mean with its standard error, clustered by the data's sampling unit (its
batches' "cluster"). `predictions.jsonl` holds per example the model's record (prompt, continuations,
log-likelihoods, scores) and the option probabilities, the choice, its kind, its group, the item it scores and
the people's distribution.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Protocol, runtime_checkable

import torch
from torch import nn

from pragexp.batches.types import PromptBatch
from pragexp.generation.ranking import TIES, chosen, right_under
from pragexp.metrics.choice import ChoiceMetric, pearson
from pragexp.metrics.choice_figures import ChoiceScores
from pragexp.metrics.item_sets import ItemSetMetric
from pragexp.tasks.base import EVAL_STAGES, PragexpTask
from pragexp.tasks.contracts import PromptData, TaskData


@runtime_checkable
class ChoiceData(TaskData, PromptData, Protocol):
    """Batches of `pragexp.batches.types.PromptBatch`: their "view" indexes `view_names`, their "kinds"
    `kind_names`; an item's views share its "cluster"."""

    view_names: Sequence[str]  # Hu et al.'s seeds; empty: every item is shown once
    kind_names: Sequence[str]  # the options' kinds (literal, associate, ...); empty: none
    position_names: Sequence[
        str
    ]  # its options' positions (MultiPragEval's A-E: `chosen/<position>`); or none

    def joint_sets(self, split: str) -> Mapping[str, Sequence[Sequence[int]]]:
        """name -> sets of examples (dataset indices), each right only when all its examples are
        (`joint_acc/<name>`: `pragexp.metrics.item_sets`); {}: none."""
        ...

    def f1_sets(self, split: str) -> Mapping[str, Sequence[Sequence[int]]]:
        """name -> batches of examples whose answers' macro-F1 is reported (`macro_f1/<name>`, over batches);
        {}: none."""
        ...


class WithItemSets(nn.Module):
    """A stage's choice metric and its item-set metric, computed and reset together."""

    def __init__(self, choice: ChoiceMetric, sets: ItemSetMetric):
        super().__init__()
        self.choice, self.sets = choice, sets

    def compute(self) -> dict[str, torch.Tensor]:
        return {**self.choice.compute(), **self.sets.compute()}

    def reset(self) -> None:
        self.choice.reset()
        self.sets.reset()


def option_probabilities(scores: torch.Tensor) -> torch.Tensor:
    """The option scores renormalised over each item's options (padding options score -inf: probability 0); a
    row without any finite score (a generated reply that named no option) is all zeros."""
    finite = torch.isfinite(scores).any(-1, keepdim=True)
    return torch.where(finite, torch.softmax(scores.masked_fill(~finite, 0.0), -1), 0.0)


class LLMChoiceTask(PragexpTask):
    data_contract = ChoiceData
    batch_types = (PromptBatch,)
    score_names = ("acc", "p_true")

    def __init__(self, model, ties: str = "first"):
        super().__init__(model)
        if ties not in TIES:
            raise ValueError(f"task.ties={ties!r}: choose one of {', '.join(TIES)}")
        self.ties = ties  # how a tie between the true option and another is read (`ranking.TIES`)
        self.kind_names: list[str] = []
        self.group_names: list[str] = []

    def build_network(self, datamodule: ChoiceData) -> nn.Module:
        self.kind_names, self.group_names = list(datamodule.kind_names), list(datamodule.group_names)
        return self.build_prompted(datamodule)

    def build_metrics(self, datamodule: ChoiceData) -> nn.ModuleDict:
        names = (
            datamodule.group_names,
            datamodule.view_names,
            datamodule.kind_names,
            tuple(datamodule.position_names),
        )
        metrics = {}
        for stage in EVAL_STAGES:
            joint, f1 = datamodule.joint_sets(stage), datamodule.f1_sets(stage)
            choice = ChoiceMetric(*names)
            metrics[stage] = WithItemSets(choice, ItemSetMetric(joint, f1)) if joint or f1 else choice
        return nn.ModuleDict(metrics)

    def evaluate_batch(self, stage: str, batch: PromptBatch) -> dict:
        items = list(batch["inputs"]["items"])
        scores = self.net(items).float().cpu()
        labels = batch["label"].cpu()
        probs = option_probabilities(scores)
        predicted = chosen(scores)
        kinds = [
            k[int(p)] if k is not None and p >= 0 else -1
            for k, p in zip(batch["kinds"], predicted, strict=True)
        ]
        corr = [
            pearson(probs[i, : len(ref)].tolist(), ref) if ref is not None else math.nan
            for i, ref in enumerate(batch["reference"])
        ]
        return {
            "correct": right_under(scores, labels, self.ties),
            "p_true": probs[torch.arange(len(labels)), labels],
            "predicted": predicted,
            "probs": probs,
            "kind": torch.tensor(kinds, dtype=torch.long),
            "corr": torch.tensor(corr, dtype=torch.float),
            "options": [list(item.options) for item in items],
        }

    def update_metrics(self, stage: str, batch: PromptBatch, scores: dict) -> None:
        metric, device = self.metrics[stage], batch["index"].device
        figures = ChoiceScores(**{field.name: scores[field.name] for field in fields(ChoiceScores)}).to(
            device
        )
        if isinstance(metric, WithItemSets):  # the examples' answers, for the sets the data module declares
            metric.sets.update(batch, figures)
            metric = metric.choice
        metric.update(batch, figures)

    def prediction_records(self, batch: PromptBatch, scores: dict) -> list[dict]:
        records = []
        for i, index in enumerate(batch["index"].tolist()):
            options, kind, group = scores["options"][i], int(scores["kind"][i]), int(batch["group"][i])
            n = len(options)
            record = {
                "index": index,
                "options": options,
                "gold": int(batch["label"][i]),
                "predicted": int(scores["predicted"][i]),
                "correct": bool(scores["correct"][i]),
                "probs": [round(float(p), 6) for p in scores["probs"][i, :n]],
                "chosen_kind": self.kind_names[kind] if kind >= 0 else None,
                "group": self.group_names[group] if group >= 0 else None,
            }
            if batch["groups"][i]:
                record["groups"] = [self.group_names[g] for g in batch["groups"][i]]
            if batch["reference"][i] is not None:
                record["human"] = [round(float(p), 4) for p in batch["reference"][i]]
                corr = float(scores["corr"][i])
                record["human_option_corr"] = None if math.isnan(corr) else round(corr, 4)
            if not math.isnan(float(batch["people_correct"][i])):
                record["people_correct"] = round(float(batch["people_correct"][i]), 4)
            records.append(record)
        return records
