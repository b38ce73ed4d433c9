"""`PromptItem`: one example as an LLM reads it, the contract between the data modules and the LLM model; and
`JudgeRequest`: a reply to one, put to a judge (the task asks, the dataset's judges answer)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PromptItem:
    """`fields` fill a template's `{name}` slots (Circa: question, answer, context; GRICE: dialogue, ...).

    `options`: this item's own options (GRICE's four candidates, the answer words of GRICE QA); None when the
    options are the template's label verbalisations (Circa, NLI, BoolQ). `label`: the gold option's index,
    read only to write demonstrations (and by tests), never when scoring. `target`: the gold text a
    demonstration of a generation task shows (PragmatiCQA's spans and answer). `references`: reference texts
    of the item that a stand-in backend replays (`llm=reference_true`) and a judge compares a reply with (the
    intentions' U2^T and U2^L); never shown to the model. `demonstrations`: the demonstrations chosen for this
    item by its dataset's own protocol (LUDWIG draws k dev pairs per test pair, as its authors' code does),
    shown instead of the prompt's shared ones when the prompt group says `demonstrations: per_item`."""

    index: int  # the example's dataset index: prediction records are joined on it
    fields: Mapping[str, str] = field(default_factory=dict)
    options: tuple[str, ...] | None = None
    label: int | None = None
    target: str | None = None
    references: Mapping[str, str] = field(default_factory=dict)
    demonstrations: tuple[PromptItem, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "fields", dict(self.fields))
        object.__setattr__(self, "references", dict(self.references))
        object.__setattr__(self, "demonstrations", tuple(self.demonstrations))
        if self.options is not None:
            object.__setattr__(self, "options", tuple(self.options))


@dataclass(frozen=True)
class JudgeRequest:
    item: PromptItem  # its references hold reply_true (U2^T) and reply_literal (U2^L)
    reply: str
    key: tuple = ()  # (dataset index, temperature, sample): seeds the option order
