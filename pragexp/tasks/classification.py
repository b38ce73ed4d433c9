"""Single-label text classification (Circa; NLI- and BoolQ-style transfer tasks reuse it).

The data module provides `num_labels`, `label_names`, `label_slugs`, `vocab_size` (None when the
model reads no text) and batches {"inputs": {...model kwargs}, "label", "index"}. Logged per
evaluation stage: `acc` (micro), `macro_f1`, `f1/<label slug>` for every label and `count`; the
confusion matrix is written to `<output dir>/confusion/<stage>.json` and `.png`, and to W&B as an
image and a table when a W&B logger is on.

A model without trainable parameters (the majority baseline) is "trained" by `observe(labels)` on
the first training epoch; no optimizer is built for it and training stops after that epoch.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from pragexp.metrics.classification import ClassificationMetric, plot_confusion
from pragexp.tasks.base import EVAL_STAGES, PragexpTask
from pragexp.utils.io import atomic_output, atomic_write_text

log = logging.getLogger(__name__)


class ClassificationTask(PragexpTask):
    score_names = ("acc",)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.label_names: list[str] = []
        self.label_slugs: list[str] = []

    def build_network(self, datamodule) -> nn.Module:
        return self.model_factory(num_labels=datamodule.num_labels, vocab_size=datamodule.vocab_size)

    def setup(self, stage: str) -> None:
        if self.net is None:
            datamodule = self.trainer.datamodule
            self.net = self.build_network(datamodule)
            self.label_names, self.label_slugs = list(datamodule.label_names), list(datamodule.label_slugs)
            self.metrics = nn.ModuleDict({s: ClassificationMetric(self.label_slugs) for s in EVAL_STAGES})

    @property
    def trainable(self) -> bool:
        return any(p.requires_grad for p in self.net.parameters())

    def forward_batch(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.net(**batch["inputs"])
        return F.cross_entropy(logits, batch["label"]), logits

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

    def _eval_step(self, stage: str, batch: dict) -> None:
        loss, logits = self.forward_batch(batch)
        self.log(f"{stage}/loss", loss, on_epoch=True, sync_dist=True, batch_size=batch["label"].numel())
        self.metrics[stage].update(batch["index"], logits.argmax(-1), batch["label"])

    def _eval_epoch_end(self, stage: str) -> None:
        metric = self.metrics[stage]
        values = metric.compute()
        confusion = metric.confusion()
        metric.reset()
        self.log_dict({f"{stage}/{k}": v for k, v in values.items()}, sync_dist=False)
        if values and not self.trainer.sanity_checking and self.trainer.is_global_zero:
            self._report_confusion(stage, confusion)

    def _report_confusion(self, stage: str, confusion: torch.Tensor) -> None:
        folder = Path(self.trainer.default_root_dir) / "confusion"
        matrix = confusion.tolist()
        record = {"labels": self.label_names, "rows": "gold", "columns": "predicted", "matrix": matrix}
        atomic_write_text(folder / f"{stage}.json", json.dumps(record, indent=2) + "\n")
        figure = plot_confusion(confusion, self.label_names, title=f"{stage} confusion (rows gold)")
        with atomic_output(folder / f"{stage}.png", binary=True) as f:
            figure.savefig(f, format="png", dpi=100)
        for logger in self.loggers:
            if type(logger).__name__ == "WandbLogger":
                logger.log_image(key=f"{stage}/confusion", images=[figure])
                logger.log_table(
                    key=f"{stage}/confusion_table",
                    columns=["gold \\ predicted", *self.label_names],
                    data=[[name, *row] for name, row in zip(self.label_names, matrix, strict=True)],
                )

    # -- optimisation ---------------------------------------------------------------------------
    def configure_optimizers(self):
        if not self.trainable:
            return None  # Lightning runs the loop without an optimizer
        return super().configure_optimizers()

    # -- checkpoint -------------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        super().on_save_checkpoint(checkpoint)
        model = checkpoint["pragexp"].get("model")
        if model and model.get("init_ckpt"):
            # The saved weights already hold the transferred encoder: evaluating this checkpoint
            # must not need (or reload) the one it started from.
            checkpoint["pragexp"]["model"] = {**model, "init_ckpt": None}
