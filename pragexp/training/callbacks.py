"""Callbacks that report what a task computed, so LightningModules only compute.

- `PredictionWriter`: the test predictions as `predictions.jsonl` in the run dir (beside
  metrics.json) and, with a W&B logger, a table of the first rows of every validation and test.
- `ConfusionMatrixReport`: a classifier's confusion matrix as `confusion/<stage>.json` and `.png`,
  and as a W&B image and table.
- `WandbTestReport`: with W&B, the final test metrics as the run's summary and a bar chart per metric
  measured per group (implicature type).
- `progress_bar()`: the live bar in a terminal; in logs that are not a terminal (CI, SLURM,
  `> log`) a line every few percent instead of a redraw every few steps.
- `BenchmarkCurves` (`callbacks.benchmarks`, its own module `training.benchmarks`): LLM benchmarks scored on
  the LLM being trained every N steps, logged as `bench/<name>/<figure>` curves.

They read `pl_module.eval_outputs[stage]`, the `EvalOutputs` that the task (`ReportingTask`: every
`PragexpTask`) fills at the end of every evaluation epoch, and write on rank 0 only.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Protocol

from pytorch_lightning import Callback
from pytorch_lightning.callbacks import ProgressBar, TQDMProgressBar

from pragexp.tasks.contracts import EvalOutputs, TaskData
from pragexp.utils.io import atomic_output, atomic_write_text


class ReportingTask(Protocol):
    """What these callbacks read from the LightningModule (`tasks.base.PragexpTask` has it)."""

    record_predictions: set[str]  # the stages whose prediction records are kept ("test"; "val" for W&B)
    eval_outputs: dict[str, EvalOutputs]  # stage -> what its last evaluation epoch gave


def wandb_loggers(trainer) -> list:
    return [lg for lg in trainer.loggers if type(lg).__name__ == "WandbLogger"]


def _run_dir(trainer) -> Path:
    return Path(trainer.default_root_dir)


def _cell(value):
    """A W&B table cell: scalars as they are, anything else as JSON text."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else json.dumps(value)


class PredictionWriter(Callback):
    def __init__(self, filename: str = "predictions.jsonl", table_rows: int = 200):
        self.filename, self.table_rows = filename, table_rows

    def setup(self, trainer, pl_module: ReportingTask, stage: str) -> None:
        if wandb_loggers(trainer):
            pl_module.record_predictions.add("val")  # only W&B shows validation predictions

    def _records(self, trainer, pl_module: ReportingTask, stage: str) -> list[dict]:
        outputs = pl_module.eval_outputs.get(stage)
        records = outputs.predictions if outputs is not None else []
        data: TaskData | None = trainer.datamodule  # the task checked it against its contract at setup
        if data is None:
            return records
        return [{**data.describe(stage, record["index"]), **record} for record in records]

    def on_validation_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or not trainer.is_global_zero or not wandb_loggers(trainer):
            return
        self._log_table(trainer, "val", self._records(trainer, pl_module, "val"))

    def on_test_end(self, trainer, pl_module) -> None:
        if not trainer.is_global_zero:
            return
        records = self._records(trainer, pl_module, "test")
        if not records:
            return
        with atomic_output(_run_dir(trainer) / self.filename) as f:
            for record in records:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._log_table(trainer, "test", records)

    def _log_table(self, trainer, stage: str, records: list[dict]) -> None:
        rows = records[: self.table_rows]
        if not rows:
            return
        columns = list(dict.fromkeys(k for record in rows for k in record))
        data = [[_cell(record.get(c)) for c in columns] for record in rows]
        for logger in wandb_loggers(trainer):
            logger.log_table(key=f"{stage}/predictions", columns=columns, data=data)


class ConfusionMatrixReport(Callback):
    def on_validation_end(self, trainer, pl_module) -> None:
        if not trainer.sanity_checking:
            self._report(trainer, pl_module, "val")

    def on_test_end(self, trainer, pl_module) -> None:
        self._report(trainer, pl_module, "test")

    def _report(self, trainer, pl_module: ReportingTask, stage: str) -> None:
        outputs = pl_module.eval_outputs.get(stage)
        confusion = outputs.confusion if outputs is not None else None
        if confusion is None or not trainer.is_global_zero or int(confusion.sum()) == 0:
            return
        names = list(outputs.label_names or [])
        from pragexp.metrics.classification import plot_confusion

        folder = _run_dir(trainer) / "confusion"
        matrix = confusion.tolist()
        record = {"labels": names, "rows": "gold", "columns": "predicted", "matrix": matrix}
        atomic_write_text(folder / f"{stage}.json", json.dumps(record, indent=2) + "\n")
        figure = plot_confusion(confusion, names, title=f"{stage} confusion (rows gold)")
        with atomic_output(folder / f"{stage}.png", binary=True) as f:
            figure.savefig(f, format="png", dpi=100)
        for logger in wandb_loggers(trainer):
            logger.log_image(key=f"{stage}/confusion", images=[figure])
            logger.log_table(
                key=f"{stage}/confusion_table",
                columns=["gold \\ predicted", *names],
                data=[[name, *row] for name, row in zip(names, matrix, strict=True)],
            )


class WandbTestReport(Callback):
    """A W&B bar chart of each test metric that is also measured per group (`test/r@1/<implicature type>`
    beside `test/r@1`). The `test/*` values themselves reach the run's summary as logged (once, by the
    test)."""

    def on_test_end(self, trainer, pl_module) -> None:
        loggers = wandb_loggers(trainer)
        if not loggers or not trainer.is_global_zero:
            return
        values = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("test/")}
        charts = group_bar_charts(values)
        for logger in loggers if charts else ():
            logger.experiment.log(charts)


def group_bar_charts(values: dict[str, float]) -> dict:
    """{`test/<metric>_by_group`: W&B bar chart} for every `test/<metric>/<group>` whose overall
    `test/<metric>` is there too (per-class scores such as Circa's `f1/<label>` have no overall twin)."""
    groups: dict[str, dict[str, float]] = defaultdict(dict)
    for key, value in values.items():
        stage, name, *group = key.split("/", 2)
        if group and f"{stage}/{name}" in values:
            groups[f"{stage}/{name}"][group[0]] = value
    if not groups:
        return {}
    import wandb

    return {
        f"{key}_by_group": wandb.plot.bar(
            wandb.Table(columns=["group", key], data=sorted(per_group.items())),
            "group",
            key,
            title=f"{key} per group",
        )
        for key, per_group in groups.items()
    }


class LogLineProgressBar(ProgressBar):
    """One line per `every_percent` of each epoch's batches (train, validation, test), for logs
    that a live bar would fill with redraws."""

    def __init__(self, every_percent: int = 10, stream=None):
        super().__init__()
        self.every_percent = every_percent
        self.stream = stream
        self._enabled = True
        self._printed: dict[str, int] = {}

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def _report(self, trainer, pl_module, stage: str, done: int, total) -> None:
        if not self._enabled or trainer.sanity_checking:
            return
        if done == 1:
            self._printed[stage] = 0
        if total and math.isfinite(total):
            bucket = int(100 * done / total) // self.every_percent
            if bucket <= self._printed.get(stage, 0) and done < total:
                return
            self._printed[stage] = bucket
            where = f"{done}/{int(total)} ({100 * done / total:.0f}%)"
        else:  # an iterable of unknown length: every 100 batches
            if done % 100:
                return
            where = str(done)
        metrics = " ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in self.get_metrics(trainer, pl_module).items()
            if k != "v_num"
        )
        epoch = f"epoch {trainer.current_epoch} " if stage == "train" else ""
        print(f"{epoch}{stage} {where} {metrics}".rstrip(), file=self.stream or sys.stderr, flush=True)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self._report(trainer, pl_module, "train", batch_idx + 1, self.total_train_batches)

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        if not trainer.sanity_checking:
            self._current_eval_dataloader_idx = dataloader_idx
            self._report(trainer, pl_module, "val", batch_idx + 1, self.total_val_batches_current_dataloader)

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self._current_eval_dataloader_idx = dataloader_idx
        self._report(trainer, pl_module, "test", batch_idx + 1, self.total_test_batches_current_dataloader)


def progress_bar(refresh_rate: int = 20, every_percent: int = 10, interactive: bool | None = None):
    """A live tqdm bar when stderr is a terminal, else `LogLineProgressBar`."""
    if interactive is None:
        interactive = sys.stderr.isatty()
    return TQDMProgressBar(refresh_rate=refresh_rate) if interactive else LogLineProgressBar(every_percent)
