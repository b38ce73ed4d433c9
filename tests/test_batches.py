"""The batches a data module hands its task are declared (`pragexp.batches.types`) and checked on arrival,
naming the keys that are missing or unknown and the data module."""

from __future__ import annotations

import pytest
import torch

from pragexp.batches.check import BatchError, check_batch
from pragexp.batches.types import EncodedBatch, GriceBatch, PromptBatch
from pragexp.data.common.prompt_examples import prompt_collate, prompt_example
from pragexp.prompting import PromptItem


def test_the_prompt_collate_builds_a_prompt_batch_whose_unset_keys_hold_their_none():
    items = [PromptItem(i, {"text": "t"}, ("yes", "no"), 0) for i in range(2)]
    batch = prompt_collate([prompt_example(item, 0, cluster=7) for item in items])
    assert check_batch(batch, (EncodedBatch, PromptBatch), "D") is PromptBatch
    assert batch["group"].tolist() == [-1, -1] and batch["view"].tolist() == [-1, -1]
    assert torch.isnan(batch["people_correct"]).all() and batch["kinds"] == [None, None]


def test_a_batch_of_no_declared_kind_is_refused_naming_its_keys_and_data_module():
    batch = {key: torch.zeros(2) for key in ("index", "cluster", "group", "label", "history", "colour")}
    with pytest.raises(BatchError) as raised:
        check_batch(batch, (GriceBatch,), "GriceDataModule")
    assert str(raised.value) == (
        "a batch of GriceDataModule is none of the kinds its task reads: read as GriceBatch, it lacks query "
        "and "
        "has unknown colour"
    )
    batch.pop("colour")
    batch["query"] = torch.zeros(2)
    assert (
        check_batch(batch, (GriceBatch,), "GriceDataModule") is GriceBatch
    )  # candidates and target: optional
