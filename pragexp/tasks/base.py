"""What every pragexp task shares, in two layers:

- `PragexpTask`: evaluation. The network (if the task has one) is built in `setup` once the data
  module is known; every evaluation batch gives per-example scores that go into DDP-exact metrics,
  logged as `stage/name` (overall and per group), and, for the stages in `record_predictions`,
  per-example prediction records that the callbacks write out (predictions.jsonl, W&B tables).
  An evaluation-only task (an LLM judged on its replies) subclasses it directly: no loss, no
  optimizer.
- `TrainableTask`: adds the loss, the training step and the optimizer and scheduler.

After each evaluation epoch, `eval_outputs[stage]` holds what callbacks report: the metric values,
the prediction records (gathered from every rank, each dataset index once, in index order) and any
task-specific artefacts (a confusion matrix, say).
"""

from __future__ import annotations

from collections.abc import Callable

import pytorch_lightning as pl
import torch
import torch.distributed as dist
from torch import nn

from pragexp.metrics import GroupedMeanMetric
from pragexp.utils import checkpoint

EVAL_STAGES = ("val", "test")


class PragexpTask(pl.LightningModule):
    """Subclasses set `score_names` and implement `build_network(datamodule)` (None for a task with
    no network of its own) and `evaluate_batch(stage, batch) -> {score name: per-example tensor}`;
    `prediction_records(batch, scores)` may describe each example's prediction as a plain dict
    holding at least its dataset `index`.

    Lightning calls `setup` before restoring a checkpoint, so loading weights works too."""

    score_names: tuple[str, ...] = ()

    def __init__(self, model: Callable[..., nn.Module] | None = None):
        super().__init__()
        self.model_factory = model
        self.model_config: dict | None = None  # the model's config, saved in checkpoints by run()
        self.net: nn.Module | None = None
        self.metrics = nn.ModuleDict()
        self.record_predictions: set[str] = {"test"}  # callbacks may add "val"
        self.eval_outputs: dict[str, dict] = {}
        self._records: dict[str, list[dict]] = {s: [] for s in EVAL_STAGES}

    # -- what a task provides ---------------------------------------------------------------------
    def build_network(self, datamodule) -> nn.Module | None:
        raise NotImplementedError

    def evaluate_batch(self, stage: str, batch: dict) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def prediction_records(self, batch: dict, scores: dict[str, torch.Tensor]) -> list[dict]:
        """One plain dict per example (with its dataset `index`); none by default."""
        return []

    def build_metrics(self, datamodule) -> nn.ModuleDict:
        groups = getattr(datamodule, "group_names", ())
        return nn.ModuleDict({s: GroupedMeanMetric(self.score_names, groups) for s in EVAL_STAGES})

    def update_metrics(self, stage: str, batch: dict, scores: dict[str, torch.Tensor]) -> None:
        """`scores` may hold more than the metric's scores (logits for the prediction records, say)."""
        self.metrics[stage].update(batch["index"], batch["group"], **{k: scores[k] for k in self.score_names})

    def epoch_artefacts(self, stage: str) -> dict:
        """Task-specific results the callbacks report, computed before the metric is reset."""
        return {}

    # -- the loop -------------------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        if self.net is None and not len(self.metrics):
            datamodule = self.trainer.datamodule
            self.net = self.build_network(datamodule)
            self.metrics = self.build_metrics(datamodule)

    def _eval_step(self, stage: str, batch: dict) -> None:
        scores = self.evaluate_batch(stage, batch)
        self.update_metrics(stage, batch, scores)
        if stage in self.record_predictions:
            self._records[stage] += self.prediction_records(batch, scores)

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step("val", batch)

    def test_step(self, batch: dict, batch_idx: int) -> None:
        self._eval_step("test", batch)

    def _eval_epoch_end(self, stage: str) -> None:
        # compute() gathers every rank's examples and counts each dataset index once.
        values = self.metrics[stage].compute()
        artefacts = self.epoch_artefacts(stage)
        self.metrics[stage].reset()
        self.log_dict({f"{stage}/{k}": v for k, v in values.items()}, sync_dist=False)
        recorded = stage in self.record_predictions  # the same on every rank: gathering is collective
        records, self._records[stage] = (gather_records(self._records[stage]) if recorded else []), []
        self.eval_outputs[stage] = {"metrics": values, "predictions": records, **artefacts}

    def on_validation_epoch_end(self) -> None:
        self._eval_epoch_end("val")

    def on_test_epoch_end(self) -> None:
        self._eval_epoch_end("test")

    # -- checkpoint: the architecture travels with the weights ----------------------------------
    def on_save_checkpoint(self, checkpoint_dict: dict) -> None:
        checkpoint.write_extras(checkpoint_dict, type(self).__name__, self.saved_model_config(), self.net)

    def saved_model_config(self) -> dict | None:
        return self.model_config


class TrainableTask(PragexpTask):
    """Subclasses implement `forward_batch(batch) -> (loss, {score name: per-example tensor})`;
    metrics, logging, optimisers and checkpoints come from here."""

    def __init__(
        self,
        model: Callable[..., nn.Module],
        optimizer: Callable,
        scheduler: Callable | None = None,
    ):
        super().__init__(model)
        self.optimizer_factory, self.scheduler_factory = optimizer, scheduler

    def forward_batch(self, batch: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    # -- what the model class declares (known before the network is built) ------------------------
    @property
    def model_class(self) -> type | None:
        return getattr(self.model_factory, "func", self.model_factory)

    @property
    def model_learns_weights(self) -> bool:
        """Whether the model is trained by gradients, so evaluating it needs a checkpoint. A model class
        without trainable parameters says `learns_weights = False` (the oracle, lead and majority
        baselines); the default is True."""
        return bool(getattr(self.model_class, "learns_weights", True))

    @property
    def model_observes_data(self) -> bool:
        """Whether the model, without weights to learn, still reads the training data once: the majority
        baseline counts the training labels (`observe`)."""
        return callable(getattr(self.model_class, "observe", None))

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        loss, _ = self.forward_batch(batch)
        self.log(
            "train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=batch["label"].numel()
        )
        return loss

    def evaluate_batch(self, stage: str, batch: dict) -> dict[str, torch.Tensor]:
        loss, scores = self.forward_batch(batch)
        self.log(f"{stage}/loss", loss, on_epoch=True, sync_dist=True, batch_size=batch["label"].numel())
        return scores

    def configure_optimizers(self):
        optimizer = self.optimizer_factory(params=self.parameters())
        if self.scheduler_factory is None:
            return optimizer
        steps = int(self.trainer.estimated_stepping_batches)
        return {
            "optimizer": optimizer,
            "lr_scheduler": self.scheduler_factory(optimizer, num_training_steps=steps),
        }


def gather_records(records: list[dict]) -> list[dict]:
    """Every rank's prediction records, each dataset index once, in index order."""
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        parts: list = [None] * dist.get_world_size()
        dist.all_gather_object(parts, records)
        records = [r for part in parts for r in part]
    unique = {}
    for record in records:
        unique.setdefault(record["index"], record)
    return [unique[i] for i in sorted(unique)]
