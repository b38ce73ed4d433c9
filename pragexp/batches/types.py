"""Every kind of batch a data module hands its task, each key documented once, here. Lightning moves these
dicts to the device and the collate functions build them; a task names the kinds it reads
(`PragexpTask.batch_types`) and checks each batch's keys against them (`pragexp.batches.check`).

- `PromptBatch`: examples that an LLM reads as prompts (the LLM benchmarks, the intentions, and Circa, NLI,
  BoolQ and GRICE with `data.prompts=true`): `pragexp.data.common.prompt_examples.prompt_collate`.
- `EncodedBatch`: text encoded for a trained model (Circa, NLI, BoolQ; GRICE read by BERT).
- `GriceBatch`: GRICE dialogues as word ids, for the memory networks and their kin.
- `PragmatiCQABatch`: PragmatiCQA's questions, for the retriever and the reader.
"""

# No `from __future__ import annotations`: a TypedDict reads `NotRequired` only from annotations it can
# evaluate.
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import torch

from pragexp.prompting import PromptItem


class Rows(TypedDict):
    """What every batch holds per example."""

    index: torch.Tensor
    """(examples,) long: each example's dataset index (predictions, metrics and DDP's padding are keyed by
    it)."""
    cluster: torch.Tensor
    """(examples,) long: the id of each example's sampling unit (`TaskData.sampling_unit`): every interval is
    clustered by it."""
    group: torch.Tensor
    """(examples,) long: an index into the data module's `group_names` (the per-group metrics), -1 for
    none."""


class LabelledRows(Rows):
    label: torch.Tensor
    """(examples,) long: the true class, candidate or option of each example."""


class PromptItems:
    """A batch's prompt items. Not a sequence type on purpose: Lightning moves batches to the device by
    walking their lists and dataclasses, and stops at an object it does not know."""

    def __init__(self, items: Sequence[PromptItem]):
        self.items = tuple(items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> PromptItem:
        return self.items[i]


class PromptInputs(TypedDict):
    items: PromptItems
    """The examples as `PromptItem`s, with their options: what a model that reads prompts takes."""


class PromptBatch(LabelledRows):
    """Examples an LLM reads as prompts; a key an example does not set holds its "none" (see each key)."""

    view: torch.Tensor
    """(examples,) long: an index into the data module's `view_names` (Hu et al.'s option orders), -1 for
    none."""
    people_correct: torch.Tensor
    """(examples,) float: people's proportion correct on the example's item (Hu et al.'s comparison);
    NaN: none."""
    kinds: list[list[int] | None]
    """Per example, a kind id (into `kind_names`: literal, associate, ...) per option; None: no kinds."""
    reference: list[list[float] | None]
    """Per example, people's answer shares over the options in the item's order; None: none."""
    groups: list[list[int] | None]
    """Per example, every group id it is in where it is in several (a language, a type and their pair: its
    `group` is then the first); None: its `group` alone."""
    inputs: PromptInputs


class EncodedBatch(LabelledRows):
    """Text encoded for a trained model, padded to the batch's longest."""

    inputs: dict
    """The model's keyword arguments: token ids, type ids and attention masks, (examples, length) or, with
    candidates, (examples, candidates, length); `{"num_examples": n}` for a model that reads no text
    (majority)."""


class GriceBatch(LabelledRows):
    """GRICE dialogues as word ids, padded to the batch's longest history, round and candidate."""

    history: torch.Tensor
    """(examples, rounds, words): the dialogue before the question."""
    query: torch.Tensor
    """(examples, words): the question and its answer."""
    candidates: NotRequired[torch.Tensor]
    """(examples, candidates, words): the explicit meanings to choose among (recovery)."""
    target: NotRequired[torch.Tensor]
    """(examples, words): the explicit meaning a generating model writes (recovery with a decoder)."""


class PragmatiCQABatch(Rows):
    """PragmatiCQA's questions ("group": the question type)."""

    query: dict
    """The query encoder's keyword arguments (token ids and attention masks)."""
    split: str
    """The split the examples come from: the task reads them as `datamodule.batch_examples(batch)`."""
    gold_passages: list[list[int]]
    """Per example, the ids of its gold passages in the corpus."""
    labels: NotRequired[torch.Tensor]
    """(examples, length) long: the reader's target token ids, -100 after each target's end (with a
    reader)."""


BATCH_TYPES = (PromptBatch, EncodedBatch, GriceBatch, PragmatiCQABatch)
