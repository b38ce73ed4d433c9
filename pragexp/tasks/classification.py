"""Single-label text classification (Circa; NLI- and BoolQ-style transfer tasks reuse it).

The data module provides `num_labels`, `label_names`, `label_slugs`, `vocab_size` (None when the
model reads no text) and batches {"inputs": {...model kwargs}, "label", "index"}. Logged per
evaluation stage: `acc` (micro), `macro_f1`, `f1/<label slug>` for every label and `count`. The
confusion matrix is left in `eval_outputs[stage]["confusion"]` for the ConfusionMatrixReport
callback (JSON and PNG in the run dir, W&B image and table).

A model without trainable parameters (the majority baseline) is "trained" by `observe(labels)` on
the first training epoch; no optimizer is built for it and training stops after that epoch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from pragexp.metrics.classification import ClassificationMetric
from pragexp.tasks.base import EVAL_STAGES, TrainableTask


class ClassificationTask(TrainableTask):
    score_names = ("acc",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.label_names: list[str] = []

    def build_network(self, datamodule) -> nn.Module:
        self.label_names = list(datamodule.label_names)
        return self.model_factory(num_labels=datamodule.num_labels, vocab_size=datamodule.vocab_size)

    def build_metrics(self, datamodule) -> nn.ModuleDict:
        return nn.ModuleDict({s: ClassificationMetric(datamodule.label_slugs) for s in EVAL_STAGES})

    @property
    def trainable(self) -> bool:
        return any(p.requires_grad for p in self.net.parameters())

    def forward_batch(self, batch: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        logits = self.net(**batch["inputs"])
        return F.cross_entropy(logits, batch["label"]), {"predicted": logits.argmax(-1)}

    def update_metrics(self, stage: str, batch: dict, scores: dict[str, torch.Tensor]) -> None:
        self.metrics[stage].update(batch["index"], scores["predicted"], batch["label"])

    def epoch_artefacts(self, stage: str) -> dict:
        return {"confusion": self.metrics[stage].confusion(), "label_names": self.label_names}

    def prediction_records(self, batch, scores):
        names = self.label_names
        return [
            {"index": int(i), "gold": names[int(y)], "predicted": names[int(p)]}
            for i, y, p in zip(batch["index"], batch["label"], scores["predicted"], strict=True)
        ]

    # -- steps --------------------------------------------------------------------------------
    def training_step(self, batch: dict, batch_idx: int):
        if not self.trainable:
            if self.current_epoch == 0:
                self.net.observe(batch["label"])
            return None  # nothing to optimise
        return super().training_step(batch, batch_idx)

    def on_train_epoch_end(self) -> None:
        if not self.trainable:
            self.trainer.should_stop = True  # one pass over the labels is all the training there is

    # -- optimisation ---------------------------------------------------------------------------
    def configure_optimizers(self):
        if not self.trainable:
            return None  # Lightning runs the loop without an optimizer
        return super().configure_optimizers()

    # -- checkpoint -------------------------------------------------------------------------------
    def saved_model_config(self) -> dict | None:
        model = self.model_config
        if model and model.get("init_ckpt"):
            # The saved weights already hold the transferred encoder: evaluating this checkpoint
            # must not need (or reload) the one it started from.
            return {**model, "init_ckpt": None}
        return model
