"""What a model class says about itself before it is built: the tasks read it (`traits(**config)`) to decide
what the data module gives it, whether evaluating it needs a checkpoint, and how to wrap and run it. Every
model a config names derives from `PragexpModel` (or declares `traits` itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from torch import nn

from pragexp.runs.record import ModelRecord


@dataclass(frozen=True)
class ModelTraits:
    learns_weights: bool = True  # trained by gradients: evaluating it needs its checkpoint
    reads_prompts: bool = False  # reads PromptItems (an LLM) instead of token ids: the data module gives them
    observes_labels: bool = (
        False  # learns by reading the training labels once (`observe`, the majority baseline)
    )
    owns_loss: bool = False  # a whole task head: computes its own loss and scores (`loss_and_logits`)
    carries_vocabulary: bool = (
        False  # holds another run's word ids: checked against the data's (`check_vocabulary`)
    )
    one_label: bool = (
        False  # predicts the same label for every input (the majority baseline): run.json says so
    )


class PragexpModel(nn.Module):
    """The base of pragexp's models: `TRAITS` for a class whose traits are fixed, `traits(**config)` for one
    whose traits depend on its settings (an LLM learns weights only when fine-tuned)."""

    TRAITS: ClassVar[ModelTraits] = ModelTraits()

    @classmethod
    def traits(cls, **config) -> ModelTraits:
        return cls.TRAITS

    def declare(self, name: str, row: str | None, trained: bool) -> ModelRecord:
        """What run.json says of this model: its `model=` choice, the row a report puts it in, and whether its
        weights were trained (here or in the checkpoint it was evaluated from), and whether it predicts one
        label by construction. An LLM says more."""
        return ModelRecord(name, row, "trained" if trained else "none", one_label=self.TRAITS.one_label)
