"""Single-label text classification: Circa (Louis, Roth and Radlinski 2020: an indirect answer to a yes/no
question -> 4 RELAXED or 6 STRICT classes), and its transfer sources NLI (MNLI: premise, hypothesis ->
entailment, neutral, contradiction) and BoolQ (a yes/no question about a passage -> no, yes). The three are
this one task on three data modules (`task=circa|nli|boolq` pick theirs); a checkpoint remembers which it
was trained for.

The data module provides what `ClassificationData` declares and batches of `EncodedBatch` (a trained model) or
`PromptBatch` (an LLM: `pragexp.batches.types`). Logged per evaluation stage: `acc` (micro), `macro_f1`,
`f1/<label slug>` for every label and `count` (and `no_answer`, the share of examples for which a generating
LLM named no label: wrong in every figure). An LLM (`model=llm`) chooses among the labels as every LLM choice
task among its options, so it also reports each figure of `CHOICE_FIGURES` (`pragexp.metrics.choice_figures`:
the Brier score, `brier`) from the softmax of its label scores, overall and per group, clustered by unit; a
generated reply that names no label has none (left out of the figure's means). A trained classifier (BERT, the
majority baseline) stays off that hook: it is the LLM choice tasks' one place, and a trained run's metrics
stay as they were. The confusion matrix is left in `eval_outputs[stage].confusion` for the
ConfusionMatrixReport callback (JSON and PNG in the run dir, W&B image and table).

A model without trainable parameters (the majority baseline) `observe`s the training labels (TrainableTask).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, get_args, runtime_checkable

import torch
import torch.nn.functional as F
from torch import nn

from pragexp.batches.types import EncodedBatch, PromptBatch
from pragexp.generation.ranking import chosen
from pragexp.metrics import choice_figures
from pragexp.metrics.classification import ClassificationMetric
from pragexp.tasks.base import EVAL_STAGES, TrainableTask
from pragexp.tasks.contracts import TaskData
from pragexp.tasks.llm_choice import option_probabilities

ClassificationBatch = EncodedBatch | PromptBatch  # a trained model's encoded text, or an LLM's prompts


@runtime_checkable
class ClassificationData(TaskData, Protocol):
    num_labels: int
    label_names: Sequence[str]  # as prediction records and the confusion matrix show them
    label_slugs: Sequence[str]  # as metric keys show them: `f1/<slug>`
    vocab_size: int | None  # of the tokenizer; None when the model reads no text (majority)


class ClassificationTask(TrainableTask):
    score_names = ("acc",)
    data_contract = ClassificationData
    batch_types = get_args(ClassificationBatch)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.label_names: list[str] = []
        # An LLM's figures of the hook of every LLM choice task, read now (`choice_figures.figures`); none for
        # a trained classifier.
        self.figures = choice_figures.figures() if self.model_traits.reads_prompts else ()

    def build_network(self, datamodule: ClassificationData) -> nn.Module:
        self.label_names = list(datamodule.label_names)
        if self.model_traits.reads_prompts:  # an LLM: its options are the prompt template's label words
            return self.build_prompted(datamodule, num_labels=datamodule.num_labels)
        return self.model_factory(num_labels=datamodule.num_labels, vocab_size=datamodule.vocab_size)

    def build_metrics(self, datamodule: ClassificationData) -> nn.ModuleDict:
        slugs, groups = datamodule.label_slugs, datamodule.group_names
        no_answer = self.model_generates  # an LLM's reply may name no label: counted, and wrong
        figures = [figure.name for figure in self.figures]
        return nn.ModuleDict(
            {s: ClassificationMetric(slugs, no_answer, figures, groups) for s in EVAL_STAGES}
        )

    def forward_batch(self, batch: ClassificationBatch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        logits = self.net(**batch["inputs"])
        return F.cross_entropy(logits, batch["label"]), {"predicted": chosen(logits), "logits": logits}

    def evaluate_batch(self, stage: str, batch: ClassificationBatch) -> dict[str, torch.Tensor]:
        scores = super().evaluate_batch(stage, batch)
        if self.figures:  # an LLM: the hook's figures of its label scores' softmax (no finite score: none)
            probs = option_probabilities(scores["logits"].detach().float())
            scores.update(
                choice_figures.plain_choice_figures(batch, probs, scores["predicted"], self.figures)
            )
        return scores

    def update_metrics(self, stage: str, batch: ClassificationBatch, scores: dict[str, torch.Tensor]) -> None:
        figures = {figure.name: scores[figure.name] for figure in self.figures}
        self.metrics[stage].update(batch, scores["predicted"], **figures)

    def epoch_artefacts(self, stage: str) -> dict:
        return {"confusion": self.metrics[stage].confusion(), "label_names": self.label_names}

    def prediction_records(self, batch: ClassificationBatch, scores: dict) -> list[dict]:
        names = self.label_names
        return [
            {"index": int(i), "gold": names[int(y)], "predicted": names[int(p)] if p >= 0 else None}
            for i, y, p in zip(batch["index"], batch["label"], scores["predicted"], strict=True)
        ]

    # -- checkpoint -------------------------------------------------------------------------------
    def saved_model_config(self) -> dict | None:
        model = self.model_config
        if model and model.get("init_ckpt"):
            # The saved weights already hold the transferred encoder: evaluating this checkpoint
            # must not need (or reload) the one it started from.
            return {**model, "init_ckpt": None}
        return model
