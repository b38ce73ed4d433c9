"""What every pragexp task shares: building its network once the data is known, optimisation,
and per-example metrics logged as `stage/name` (overall and per group)."""

from __future__ import annotations

from collections.abc import Callable

import pytorch_lightning as pl
import torch
from torch import nn

from pragexp.metrics import GroupedMeanMetric

EVAL_STAGES = ("val", "test")


class PragexpTask(pl.LightningModule):
    """Subclasses set `score_names` and implement `build_network(datamodule)` and
    `forward_batch(batch) -> (loss, {score name: per-example tensor})`.

    The network is built in `setup`, when the data module has told us its vocabulary and label
    sizes; Lightning calls `setup` before restoring a checkpoint, so loading weights works too.
    """

    score_names: tuple[str, ...] = ()

    def __init__(
        self, model: Callable[..., nn.Module], optimizer: Callable, scheduler: Callable | None = None
    ):
        super().__init__()
        self.model_factory, self.optimizer_factory, self.scheduler_factory = model, optimizer, scheduler
        self.model_config: dict | None = None  # the model's config, saved in checkpoints by run()
        self.net: nn.Module | None = None
        self.metrics = nn.ModuleDict()

    def build_network(self, datamodule) -> nn.Module:
        raise NotImplementedError

    def forward_batch(self, batch: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    def setup(self, stage: str) -> None:
        if self.net is None:
            datamodule = self.trainer.datamodule
            self.net = self.build_network(datamodule)
            groups = getattr(datamodule, "group_names", ())
            self.metrics = nn.ModuleDict(
                {s: GroupedMeanMetric(self.score_names, groups) for s in EVAL_STAGES}
            )

    # -- steps --------------------------------------------------------------------------------
    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        loss, _ = self.forward_batch(batch)
        self.log(
            "train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=batch["label"].numel()
        )
        return loss

    def _eval_step(self, stage: str, batch: dict) -> None:
        loss, scores = self.forward_batch(batch)
        self.log(f"{stage}/loss", loss, on_epoch=True, sync_dist=True, batch_size=batch["label"].numel())
        self.metrics[stage].update(batch["index"], batch["group"], **scores)

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step("val", batch)

    def test_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step("test", batch)

    def _eval_epoch_end(self, stage: str) -> None:
        # compute() gathers every rank's examples and counts each dataset index once.
        values = self.metrics[stage].compute()
        self.metrics[stage].reset()
        self.log_dict({f"{stage}/{k}": v for k, v in values.items()}, sync_dist=False)

    def on_validation_epoch_end(self) -> None:
        self._eval_epoch_end("val")

    def on_test_epoch_end(self) -> None:
        self._eval_epoch_end("test")

    # -- optimisation ---------------------------------------------------------------------------
    def configure_optimizers(self):
        optimizer = self.optimizer_factory(params=self.parameters())
        if self.scheduler_factory is None:
            return optimizer
        steps = int(self.trainer.estimated_stepping_batches)
        return {
            "optimizer": optimizer,
            "lr_scheduler": self.scheduler_factory(optimizer, num_training_steps=steps),
        }

    # -- checkpoint: the architecture travels with the weights ----------------------------------
    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["pragexp"] = {"task": type(self).__name__, "model": self.model_config}
