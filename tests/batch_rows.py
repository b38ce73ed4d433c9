"""Batches as the metrics take them, from the columns a test names; what a test leaves out holds its "none":
`rows` (what every batch holds, `Rows`/`LabelledRows`) and `choice_rows` (a choice task's `PromptBatch` and
the model's `ChoiceScores`)."""

from __future__ import annotations

import math

import torch

from pragexp.batches.types import PromptBatch, PromptItems
from pragexp.metrics.choice_figures import ChoiceScores


def rows(index, group=None, cluster=None, label=None) -> dict:
    """Every batch's columns: `group` -1 (none), `cluster` each example its own unit, `label` 0 by default."""
    index = torch.as_tensor(index)
    none = torch.full_like(index, -1)
    return {
        "index": index,
        "group": none if group is None else torch.as_tensor(group),
        "cluster": index if cluster is None else torch.as_tensor(cluster),
        "label": torch.zeros_like(index) if label is None else torch.as_tensor(label),
    }


def choice_rows(
    index,
    correct,
    p_true=None,
    **columns,
) -> tuple[PromptBatch, ChoiceScores]:
    """`index`, `correct` and `p_true` (default: `correct`) per example; `columns` may name the batch's
    `group`, `view`, `cluster` (default: `index`), `label`, `people_correct`, `groups`, `reference` and the
    scores' `kind`, `corr`, `predicted` and `probs` (default: `p_true` on the label, the rest shared by one
    other option)."""
    index = torch.as_tensor(index)
    n = len(index)
    correct = torch.as_tensor(correct, dtype=torch.float)
    p_true = correct if p_true is None else torch.as_tensor(p_true, dtype=torch.float)
    none = {"group": -1, "view": -1, "label": 0, "kind": -1, "predicted": -1}
    number = {key: torch.as_tensor(columns.get(key, [value] * n)) for key, value in none.items()}
    batch = PromptBatch(
        index=index,
        cluster=torch.as_tensor(columns.get("cluster", index)),
        group=number["group"],
        view=number["view"],
        label=number["label"],
        people_correct=torch.as_tensor(columns.get("people_correct", [math.nan] * n), dtype=torch.float),
        kinds=[None] * n,
        reference=columns.get("reference", [None] * n),
        groups=columns.get("groups", [None] * n),
        inputs={"items": PromptItems([])},
    )
    probs = columns.get("probs")
    if probs is None:
        probs = torch.stack([1 - p_true, p_true], dim=1)
        probs[number["label"] == 0] = probs[number["label"] == 0].flip(1)
    scores = ChoiceScores(
        correct=correct,
        p_true=p_true,
        probs=torch.as_tensor(probs, dtype=torch.float),
        predicted=number["predicted"],
        kind=number["kind"],
        corr=torch.as_tensor(columns.get("corr", [math.nan] * n), dtype=torch.float),
    )
    return batch, scores
