"""What every pragexp task shares, in two layers:

- `PragexpTask`: evaluation. The network (if the task has one) is built in `setup` once the data
  module is known; every evaluation batch gives per-example scores that go into DDP-exact metrics,
  logged as `stage/name` (overall and per group), and, for the stages in `record_predictions`,
  per-example prediction records that the callbacks write out (predictions.jsonl, W&B tables).
  An evaluation-only task (an LLM judged on its replies) subclasses it directly: no loss, no
  optimizer.
- `TrainableTask`: adds the loss, the training step and the optimizer and scheduler, and the models
  that learn nothing by gradients (no trainable parameter: no optimizer; one that `observe`s the training
  labels reads them once; training stops after that).

Contracts are declared, never discovered (`tasks.contracts`): what a task reads from its data module
(`TaskData`, and each task family's own `Protocol` beside the task, named by its `data_contract`; its
`sampling_unit` too), what it asks of its model's class before building it (`ModelClass`: its `traits`), and
what it asks of a built model that reads prompts (an LLM: `PromptedModel`) or observes the training labels
(`LabelObserver`). `setup` checks each, naming what is missing.

After each evaluation epoch, `eval_outputs[stage]` holds what callbacks report, an `EvalOutputs`: the metric
values, the prediction records (gathered from every rank, each dataset index once, in index order) and a
classifier's confusion matrix. At the end of each stage the task closes the response caches it used (each logs
what it found and asked: `generation.cache.cached_backend`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ClassVar

import pytorch_lightning as pl
import torch
import torch.distributed as dist
from torch import nn
from torch.optim.lr_scheduler import ReduceLROnPlateau

from pragexp.batches.check import check_batch
from pragexp.batches.types import BATCH_TYPES, Rows
from pragexp.generation.cache.cached_backend import close_caches
from pragexp.metrics import GroupedMeanMetric
from pragexp.metrics.generation import GenerationMetric
from pragexp.models.traits import ModelTraits
from pragexp.runs import checkpoint
from pragexp.runs.sampling_unit import SamplingUnit
from pragexp.tasks.contracts import (
    EvalOutputs,
    LabelObserver,
    ModelClass,
    PromptData,
    PromptedModel,
    TaskData,
)
from pragexp.utils.contracts import missing_members, require

EVAL_STAGES = ("val", "test")


class PragexpTask(pl.LightningModule):
    """Subclasses set `score_names` and implement `build_network(datamodule)` (None for a task with
    no network of its own) and `evaluate_batch(stage, batch) -> {score name: per-example tensor}`;
    `prediction_records(batch, scores)` may describe each example's prediction as a plain dict
    holding at least its dataset `index`.

    Lightning calls `setup` before restoring a checkpoint, so loading weights works too."""

    score_names: tuple[str, ...] = ()
    data_contract: ClassVar[type] = TaskData  # what `self.data` provides; subclasses narrow it
    batch_types: ClassVar[tuple[type, ...]] = BATCH_TYPES  # the kinds of batch it reads (`pragexp.batches`)

    def __init__(self, model: Callable[..., nn.Module] | None = None):
        super().__init__()
        self.model_factory = model
        self.model_config: dict | None = None  # the model's config, saved in checkpoints by run()
        self.task_name: str | None = None  # the task= choice, saved in checkpoints by run()
        self.net: nn.Module | None = None
        self.prompted: PromptedModel | None = None  # the part of the network that reads prompts (an LLM)
        self.answer_metrics: nn.ModuleDict | None = (
            None  # a generating LLM's unparsed/forced/reasoning tokens
        )
        self.metrics = nn.ModuleDict()
        self.record_predictions: set[str] = {"test"}  # callbacks may add "val"
        self.eval_outputs: dict[str, EvalOutputs] = {}
        self._records: dict[str, list[dict]] = {s: [] for s in EVAL_STAGES}
        self.model_traits = ModelTraits(learns_weights=False) if model is None else _traits(model)

    # -- what a task provides ---------------------------------------------------------------------
    def build_network(self, datamodule: TaskData) -> nn.Module | None:
        raise NotImplementedError

    def evaluate_batch(self, stage: str, batch: Rows) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def prediction_records(self, batch: Rows, scores: dict[str, torch.Tensor]) -> list[dict]:
        """One plain dict per example (with its dataset `index`); none by default."""
        return []

    def build_metrics(self, datamodule: TaskData) -> nn.ModuleDict:
        return nn.ModuleDict(
            {s: GroupedMeanMetric(self.score_names, datamodule.group_names) for s in EVAL_STAGES}
        )

    def update_metrics(self, stage: str, batch: Rows, scores: dict[str, torch.Tensor]) -> None:
        """`scores` may hold more than the metric's scores (logits for the prediction records, say)."""
        self.metrics[stage].update(batch, **{k: scores[k] for k in self.score_names})

    def epoch_artefacts(self, stage: str) -> dict:
        """More of `EvalOutputs`' fields (a classifier's `confusion` and `label_names`), computed before the
        metric is reset."""
        return {}

    # -- the model --------------------------------------------------------------------------------
    def build_prompted(self, datamodule, contract: type = PromptedModel, **sizes) -> nn.Module:
        """A model that reads prompts, its demonstrations drawn from the training split (`PromptData`);
        `contract` is what the task asks of it (a `PromptedModel` or more), checked here with the missing
        members named."""
        missing = missing_members(datamodule, PromptData)
        if missing:
            raise TypeError(
                f"the model reads prompts, and {type(datamodule).__name__} gives none (lacks "
                f"{', '.join(missing)})"
            )
        net = self.model_factory(**sizes)
        require(net, contract, f"model {type(net).__name__}", "a model that reads prompts needs them")
        if net.shots:
            net.demonstrate(datamodule.prompt_items("train"))
        self.prompted = net
        return net

    @property
    def model_generates(self) -> bool:
        """Whether the built model answers by generating text, which may name no option (`no_answer`)."""
        return self.prompted is not None and self.prompted.generates

    def save_adapter(self, folder) -> None:
        """Beside a checkpoint: a fine-tuned LLM's weights in their own format (nothing for other models)."""
        if self.prompted is not None:
            self.prompted.save_adapter(folder)

    # -- the loop -------------------------------------------------------------------------------
    @property
    def data(self) -> TaskData:
        """The data module, as the task's `data_contract` declares it."""
        return self.trainer.datamodule

    def setup(self, stage: str) -> None:
        if self.net is None and not len(self.metrics):
            datamodule = self.data
            missing = missing_members(datamodule, self.data_contract)
            if missing:
                raise TypeError(
                    f"{type(self).__name__} reads {', '.join(missing)} from its data module, which "
                    f"{type(datamodule).__name__} lacks ({self.data_contract.__name__}): is data= the task's?"
                )
            if not isinstance(datamodule.sampling_unit, SamplingUnit):
                raise TypeError(
                    f"{type(datamodule).__name__}.sampling_unit is {datamodule.sampling_unit!r}: declare the "
                    "unit "
                    "the data draws independently as a pragexp.runs.sampling_unit.SamplingUnit"
                )
            self.net = self.build_network(datamodule)
            if self.model_traits.observes_labels:
                require(self.net, LabelObserver, f"model {type(self.net).__name__}")
            self.metrics = self.build_metrics(datamodule)
            if self.model_generates:
                self.answer_metrics = nn.ModuleDict({s: GenerationMetric() for s in EVAL_STAGES})

    def on_after_batch_transfer(self, batch, dataloader_idx: int):
        """Every batch is checked against the kinds the task reads, naming what is missing or unknown and the
        data module that made it (a set of a dozen keys: nothing beside a step)."""
        check_batch(batch, self.batch_types, type(self.trainer.datamodule).__name__)
        return batch

    def _eval_step(self, stage: str, batch: Rows) -> None:
        scores = self.evaluate_batch(stage, batch)
        self.update_metrics(stage, batch, scores)
        # A model that keeps what each decision rests on (an LLM: its prompt, each option's log-likelihood)
        # hands it over by dataset index; it joins the task's own record of the example.
        extra = dict(self.prompted.take_records()) if self.prompted is not None else {}
        if self.answer_metrics is not None:
            self.answer_metrics[stage].update(extra, batch["index"], batch["cluster"])
        if stage in self.record_predictions:
            records = self.prediction_records(batch, scores)
            unit_of = dict(zip(batch["index"].tolist(), batch["cluster"].tolist(), strict=True))
            for record in records:
                record.update(extra.get(record["index"], {}))
                record["cluster"] = unit_of[record["index"]]  # `report compare` pairs and resamples by it
            self._records[stage] += records

    def validation_step(self, batch: Rows, batch_idx: int) -> None:
        self._eval_step("val", batch)

    def test_step(self, batch: Rows, batch_idx: int) -> None:
        self._eval_step("test", batch)

    def _eval_epoch_end(self, stage: str) -> None:
        # compute() gathers every rank's examples and counts each dataset index once.
        values = self.metrics[stage].compute()
        if self.answer_metrics is not None:
            values = {**values, **self.answer_metrics[stage].compute()}
            self.answer_metrics[stage].reset()
        artefacts = self.epoch_artefacts(stage)
        self.metrics[stage].reset()
        self.log_dict({f"{stage}/{k}": v for k, v in values.items()}, sync_dist=False)
        recorded = stage in self.record_predictions  # the same on every rank: gathering is collective
        records, self._records[stage] = (gather_records(self._records[stage]) if recorded else []), []
        self.eval_outputs[stage] = EvalOutputs(values, records, **artefacts)

    def on_validation_epoch_end(self) -> None:
        self._eval_epoch_end("val")

    def on_test_epoch_end(self) -> None:
        self._eval_epoch_end("test")

    def teardown(self, stage: str) -> None:
        close_caches()  # the model's and the judge's response caches, opened again on their next call

    # -- checkpoint: the architecture travels with the weights ----------------------------------
    def on_save_checkpoint(self, checkpoint_dict: dict) -> None:
        checkpoint.write_extras(
            checkpoint_dict, type(self).__name__, self.task_name, self.saved_model_config(), self.net
        )

    def saved_model_config(self) -> dict | None:
        return self.model_config


def _traits(model_factory: Callable) -> ModelTraits:
    """The traits of the model a factory builds (a class, or Hydra's partial of one), from its settings."""
    if isinstance(model_factory, functools.partial):  # a config's `_partial_: true`
        model_class, config = model_factory.func, model_factory.keywords
    else:
        model_class, config = model_factory, {}
    require(model_class, ModelClass, f"model class {model_class.__name__}", "derive it from PragexpModel")
    return model_class.traits(**config)


class TrainableTask(PragexpTask):
    """Subclasses implement `forward_batch(batch) -> (loss, {score name: per-example tensor})`: the training
    loss and, for the default `evaluate_batch`, the scores (a task whose evaluation does more, such as
    retrieving deeper and generating, overrides `evaluate_batch`); metrics, logging, optimisers and
    checkpoints come from here.

    A network without trainable parameters (the baselines) gets no optimizer. If it `observe`s data (the
    majority baseline counts the training labels: `net.observe(batch["label"], batch["index"])`), the first
    training epoch shows it every batch; training then stops (before the first epoch for one that observes
    nothing).

    A plateau scheduler (`ReduceLROnPlateau`) is stepped after every validation, with the validation's value
    of its monitor (one of the task's metrics): the paper's schedule halves the learning rate when dev
    perplexity stops improving, validating every quarter epoch, not once per epoch."""

    def __init__(
        self,
        model: Callable[..., nn.Module],
        optimizer: Callable,
        scheduler: Callable | None = None,
    ):
        super().__init__(model)
        self.optimizer_factory, self.scheduler_factory = optimizer, scheduler
        self._plateau: ReduceLROnPlateau | None = None
        self._plateau_monitor: str | None = None

    def forward_batch(self, batch: Rows) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        raise NotImplementedError

    # -- what the built network has -----------------------------------------------------------------
    @property
    def trainable(self) -> bool:
        return any(p.requires_grad for p in self.parameters())

    # -- steps --------------------------------------------------------------------------------------
    def training_step(self, batch: Rows, batch_idx: int) -> torch.Tensor | None:
        if not self.trainable:
            if self.model_traits.observes_labels and self.current_epoch == 0:
                self.net.observe(batch["label"], batch["index"])  # by index: DDP's shards repeat some
            # Nothing to optimise: a constant loss (Lightning refuses a step that returns None under DDP).
            return torch.zeros((), device=self.device, requires_grad=True)
        loss, _ = self.forward_batch(batch)
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=batch_size(batch))
        return loss

    def evaluate_batch(self, stage: str, batch: Rows) -> dict[str, torch.Tensor]:
        loss, scores = self.forward_batch(batch)
        traits = self.model_traits
        if traits.learns_weights or not traits.reads_prompts:  # an LLM scored as it is has no loss to watch
            self.log(f"{stage}/loss", loss, on_epoch=True, sync_dist=True, batch_size=batch_size(batch))
        return scores

    def on_train_start(self) -> None:
        if not self.trainable and not self.model_traits.observes_labels:
            self.trainer.should_stop = True  # nothing to learn, nothing to read

    def on_train_epoch_end(self) -> None:
        if not self.trainable:
            self.trainer.should_stop = True  # one pass over the data is all the training there is

    # -- optimisation ---------------------------------------------------------------------------------
    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
        if not params:
            return None  # Lightning runs the loop without an optimizer
        optimizer = self.optimizer_factory(params=params)
        if self.scheduler_factory is None:
            return optimizer
        config = self.scheduler_factory(
            optimizer, num_training_steps=int(self.trainer.estimated_stepping_batches)
        )
        if isinstance(config.get("scheduler"), ReduceLROnPlateau):
            # Stepped here after every validation; Lightning keeps its state in checkpoints.
            self._plateau, self._plateau_monitor = config["scheduler"], config.get("monitor")
            config = {**config, "strict": False}
        return {"optimizer": optimizer, "lr_scheduler": config}

    def lr_scheduler_step(self, scheduler, metric) -> None:
        if scheduler is self._plateau:
            return  # stepped in on_validation_epoch_end
        super().lr_scheduler_step(scheduler, metric)

    def on_validation_epoch_end(self) -> None:
        super().on_validation_epoch_end()
        if self._plateau is None or self.trainer.sanity_checking or self.trainer.state.fn != "fit":
            return
        values = self.eval_outputs["val"].metrics
        name = self._plateau_monitor.split("/", 1)[1]
        if name not in values:
            raise ValueError(
                f"scheduler.monitor={self._plateau_monitor} is not among this validation's metrics "
                f"({', '.join(f'val/{k}' for k in values)})"
            )
        self._plateau.step(float(values[name]))


def no_answer(scores: torch.Tensor) -> torch.Tensor:
    """1.0 where a row has no finite score: the model gave no answer."""
    return (~torch.isfinite(scores).any(-1)).float()


def batch_size(batch: Rows) -> int:
    """Examples in a batch: every batch holds their dataset indices."""
    return len(batch["index"])


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
