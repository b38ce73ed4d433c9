"""Examples for a model that reads prompts (`model=llm`: `data.prompts=true`): each carries its `PromptItem`,
and batches (`pragexp.batches.types.PromptBatch`) hand the items to the model as `inputs={"items": [...]}`,
where a trained model finds its token ids; labels, indices and groups are batched as for every model."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from pragexp.batches.types import PromptBatch, PromptItems
from pragexp.data.common.datamodules.base import SplitsDataModule
from pragexp.prompting import PromptItem


def prompt_example(item: PromptItem, label: int, cluster: int, group: int | None = None) -> dict:
    """An example of `item`; `cluster`: the id of its sampling unit (the data module's `sampling_unit`)."""
    example = {"index": item.index, "label": label, "cluster": cluster, "item": item}
    if group is not None:
        example["group"] = group
    return example


NUMBERS = ("index", "label", "cluster")  # every example sets them
# what an example that does not set one of these holds (`PromptBatch` documents each key)
NONE = {"group": -1, "view": -1, "people_correct": math.nan}
LISTS = ("kinds", "reference", "groups")  # a list per example, or None


def prompt_collate(examples: Sequence[dict]) -> PromptBatch:
    batch = {key: torch.tensor([x[key] for x in examples]) for key in NUMBERS}
    batch.update({key: torch.tensor([x.get(key, none) for x in examples]) for key, none in NONE.items()})
    batch.update({key: [x.get(key) for x in examples] for key in LISTS})
    batch["inputs"] = {"items": PromptItems([x["item"] for x in examples])}
    return PromptBatch(**batch)


def readable(text: str) -> str:
    """Identifiers such as `dining_room` as words, for an LLM."""
    return text.replace("_", " ")


class PromptDataModule(SplitsDataModule):
    """The base of a data module whose examples exist only as prompts for an LLM (the intentions, the
    benchmarks): its splits' examples carry their `PromptItem` ("item"); it batches them with `prompt_collate`
    and gives every item of a split (`prompt_items`). Groups, views and option kinds: none unless it sets
    them."""

    group_names: tuple[str, ...] = ()
    view_names: tuple[str, ...] = ()
    kind_names: tuple[str, ...] = ()
    position_names: tuple[str, ...] = ()  # what its options' positions are called (A-E), where it says

    def joint_sets(self, split: str) -> dict[str, list[list[int]]]:
        """Sets of examples right only together (`ChoiceData.joint_sets`): none unless a benchmark forms
        them."""
        return {}

    def f1_sets(self, split: str) -> dict[str, list[list[int]]]:
        """Batches of examples whose macro-F1 is reported (`ChoiceData.f1_sets`): none unless a benchmark
        asks."""
        return {}

    def collate_fn(self):
        return prompt_collate

    def prompt_items(self, split: str) -> list[PromptItem]:
        return [e["item"] for e in self.datasets.get(split, [])]
