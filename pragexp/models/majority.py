"""Majority-class baseline: predicts the most frequent label it saw in training, whatever the input.

It has no trainable parameters; "training" is `observe(labels, indices)`, which counts labels into a
buffer (saved in checkpoints). Its logits are the log of the add-one smoothed label distribution, so the
loss is finite and the argmax is the majority class (the lowest label id on a tie).

Under DDP each rank reads only its shard of the training split, and the distributed sampler pads the
shards with repeated examples. `observe` therefore gathers every rank's batch and counts each dataset
index once: every rank holds the counts of the whole split, whatever its shard.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torchmetrics.utilities.distributed import gather_all_tensors

from pragexp.models.traits import ModelTraits, PragexpModel
from pragexp.utils.per_example import first_per_index


class MajorityClassifier(PragexpModel):
    # It counts labels (`observe`) instead of learning by gradients: evaluated without a checkpoint.
    TRAITS = ModelTraits(learns_weights=False, observes_labels=True, one_label=True)

    def __init__(self, num_labels: int, vocab_size: int | None = None):
        super().__init__()  # vocab_size is accepted, and ignored, so every classifier is built alike
        self.register_buffer("counts", torch.zeros(num_labels, dtype=torch.long))
        self._seen: set[int] = set()  # dataset indices already counted (not saved: one pass is all there is)

    @torch.no_grad()
    def observe(self, labels: torch.Tensor, indices: torch.Tensor | None = None) -> None:
        """Counts `labels`. With their dataset `indices`, every rank's batch is counted (a collective call
        under DDP: every rank calls it once per batch, as the training loop does), each index once."""
        labels = labels.reshape(-1).long()
        if indices is not None:
            indices, labels = first_per_index(*_every_rank(indices.reshape(-1).long(), labels))
            new = [i not in self._seen for i in indices.tolist()]
            self._seen.update(indices.tolist())
            labels = labels[torch.tensor(new, dtype=torch.bool, device=labels.device)]
        self.counts += torch.bincount(labels, minlength=self.counts.numel()).to(self.counts)

    @property
    def majority(self) -> int:
        return int(torch.argmax(self.counts))  # the first maximum

    def forward(
        self, input_ids: torch.Tensor | None = None, num_examples: int | None = None, **unused
    ) -> torch.Tensor:
        n = int(num_examples) if num_examples is not None else input_ids.shape[0]
        prior = (self.counts.float() + 1.0) / (self.counts.sum().float() + self.counts.numel())
        return prior.log().unsqueeze(0).expand(n, -1)


def _every_rank(*columns: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Each column concatenated over the DDP ranks (their lengths may differ); as it is without DDP."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return columns
    stacked = torch.stack(columns)  # one gather for all columns: (columns, examples)
    return tuple(torch.cat(gather_all_tensors(stacked), dim=1))
