"""What a task reads from its data module and asks of its model, declared: `TaskData` (every task's data; each
task family narrows it with its own Protocol beside the task, named by its `data_contract`), `PromptData`
(data a model that reads prompts needs), `ModelClass` (a model's class, before it is built: its traits),
`PromptedModel` and `LabelObserver` (a built model that reads prompts, or the training labels),
`DeclaredModel` (what run.json asks of the model), and what an evaluation epoch hands the callbacks
(`EvalOutputs`). `PragexpTask.setup` checks each, naming what is missing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import torch

from pragexp.models.traits import ModelTraits
from pragexp.runs.record import ModelRecord
from pragexp.runs.sampling_unit import SamplingUnit


@runtime_checkable
class TaskData(Protocol):
    """What every task reads from its data module (besides Lightning's loaders)."""

    group_names: Sequence[str]
    """What `batch["group"]` indexes (per-group metrics: `test/acc/<group>`); empty for none."""

    sampling_unit: SamplingUnit
    """What the data draws independently (a dialogue, a conversation, an item): `batch["cluster"]` holds each
    row's unit id, and every standard error, interval and paired test is clustered by it."""

    def describe(self, split: str, index: int) -> dict:
        """The example behind a prediction, as plain data (the prediction callbacks write it beside it)."""
        ...


@runtime_checkable
class PromptData(Protocol):
    """What a data module gives a model that reads prompts (besides batches whose `inputs` are
    `{"items": [PromptItem, ...]}`)."""

    def prompt_items(self, split: str) -> Sequence:
        """Every example of a split as a `pragexp.prompting.PromptItem` (demonstrations come from train)."""
        ...


class ModelClass(Protocol):
    """What a task asks of a model's class before building it (`pragexp.models.traits.PragexpModel` has
    it)."""

    def traits(self, **config) -> ModelTraits:
        """What the model is, from its settings: whether it learns weights, reads prompts, ..."""
        ...


class PromptedModel(Protocol):
    """What a task asks of a built model that reads prompts (`model=llm`:
    `pragexp.models.llm.PromptedLLM`)."""

    shots: int  # demonstrations drawn from the training split
    generates: bool  # chooses by generating text, which may name no option (`no_answer`)
    learns: bool  # its weights train here (fine-tuned)

    def demonstrate(self, training_items: Sequence) -> None: ...

    def take_records(self) -> list[tuple[int, dict]]:
        """(dataset index, what a decision rests on) per item seen since the last call."""
        ...

    def save_adapter(self, folder) -> Path | None:
        """The tuned weights in their own format beside a checkpoint; None when nothing was tuned."""
        ...


@runtime_checkable
class DeclaredModel(Protocol):
    """What run.json asks of the model a task holds, wherever it keeps it (a reader among PragmatiCQA's
    networks, a reader inside GRICE's head): `pragexp.models.traits.PragexpModel` has it."""

    def declare(self, name: str, row: str | None, trained: bool) -> ModelRecord:
        """run.json's model record: its `model=` choice, its report row, whether its weights were trained."""
        ...


class LabelObserver(Protocol):
    """What a task asks of a model that learns by reading the training labels once (the majority baseline)."""

    def observe(self, labels: torch.Tensor, indices: torch.Tensor) -> None:
        """Counts a training batch's labels, each dataset index once over every rank (a collective call)."""
        ...


@dataclass
class EvalOutputs:
    """What an evaluation epoch hands the callbacks (`training.callbacks`)."""

    metrics: dict[str, torch.Tensor]  # score name (`acc`, `acc/<group>`) -> value
    predictions: list[dict]  # one record per example, with its dataset `index`; empty when not recorded
    confusion: torch.Tensor | None = None  # a classifier's counts, gold rows by predicted columns
    label_names: Sequence[str] | None = None  # the confusion matrix's rows and columns
