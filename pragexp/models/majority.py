"""Majority-class baseline: predicts the most frequent label it saw in training, whatever the input.

It has no trainable parameters; "training" is `observe(labels)`, which counts labels into a buffer
(saved in checkpoints). Its logits are the log of the add-one smoothed label distribution, so the
loss is finite and the argmax is the majority class (the lowest label id on a tie).
"""

from __future__ import annotations

import torch

from pragexp.models.traits import ModelTraits, PragexpModel


class MajorityClassifier(PragexpModel):
    # It counts labels (`observe`) instead of learning by gradients: evaluated without a checkpoint.
    TRAITS = ModelTraits(learns_weights=False, observes_labels=True)

    def __init__(self, num_labels: int, vocab_size: int | None = None):
        super().__init__()  # vocab_size is accepted, and ignored, so every classifier is built alike
        self.register_buffer("counts", torch.zeros(num_labels, dtype=torch.long))

    @torch.no_grad()
    def observe(self, labels: torch.Tensor) -> None:
        self.counts += torch.bincount(labels.reshape(-1).long(), minlength=self.counts.numel()).to(
            self.counts
        )

    @property
    def majority(self) -> int:
        return int(torch.argmax(self.counts))  # the first maximum

    def forward(
        self, input_ids: torch.Tensor | None = None, num_examples: int | None = None, **unused
    ) -> torch.Tensor:
        n = int(num_examples) if num_examples is not None else input_ids.shape[0]
        prior = (self.counts.float() + 1.0) / (self.counts.sum().float() + self.counts.numel())
        return prior.log().unsqueeze(0).expand(n, -1)
