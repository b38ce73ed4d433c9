"""A stop or a fault at a chosen point of a run, for the preemption and checkpoint tests
(tests/test_preemption.py): a callback that acts only in a run whose environment has STOP_AT set (and in a
SLURM job's first run only).

`where`: train | val | test (right after batch `batch` of epoch `epoch`; the epoch's last one: -1) or save
(while Lightning builds a checkpoint of epoch `epoch`, before its file is written) or bench (while the
benchmark curves' pass at optimizer step `batch` of epoch `epoch` scores, `training.benchmarks`: after the
first test batch of its first benchmark); with `run`, only in the run whose dir has that name (a sweep's job
number); with `rank`, only on that DDP rank (a signal that reaches one task of a job before the others).
`how`:
- signal: sends the run SIGTERM (what SLURM's scancel and time limit send; submitit's SIGUSR2 takes the same
  path);
- wait: waits there until a signal reaches the run (one the test has SLURM send: a real preemption's path);
- kill: (save) the checkpoint's bytes are written half-way, then the run is killed with SIGKILL;
- fill: (save) fills the disk the checkpoint goes to, leaving 64 KiB, before it is written;
- adapter_kill: the run is killed with SIGKILL when a checkpoint's tuned LLM weights (`<name>.peft/`,
  `training.checkpoints.save_tuned_weights`) next come to replace the previous folder.
Sleeping draws no random numbers: a run stopped here and resumed can be compared with one never stopped."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import time
from pathlib import Path

import torch
from pytorch_lightning import Callback


class StopAt(Callback):
    def __init__(self, where: str, epoch: int = 0, batch: int = 0, how: str = "signal", run=None, rank=None):
        self.where, self.epoch, self.batch, self.how = where, epoch, batch, how
        self.run = run  # only in the run whose dir has this name (a sweep's job number); None: any
        self.rank = rank  # only on this DDP rank; None: every one
        self.done = False

    def _reached(self, trainer, where: str, batch: int | None = None, batches: int = 0) -> None:
        first_run = os.environ.get("SLURM_RESTART_COUNT", "0") == "0"
        if self.done or where != self.where or not os.environ.get("STOP_AT") or not first_run:
            return
        if self.run is not None and Path(trainer.default_root_dir).name != str(self.run):
            return
        if self.rank is not None and trainer.global_rank != self.rank:
            return
        if trainer.sanity_checking or (where != "test" and trainer.current_epoch != self.epoch):
            return
        if batch is not None and batch != (self.batch if self.batch >= 0 else batches + self.batch):
            return
        self.done = True
        print(f"stop_at: {where} epoch {trainer.current_epoch} batch {batch}: {self.how}", flush=True)
        actions = {"signal": _signal, "wait": _wait, "kill": _kill_mid_write, "fill": _fill_disk}
        (actions | {"adapter_kill": _kill_at_adapter_folder})[self.how](trainer)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self._reached(trainer, "train", batch_idx, trainer.num_training_batches)

    def on_validation_batch_end(
        self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0
    ) -> None:
        if trainer.state.fn == "fit":
            self._reached(trainer, "val", batch_idx, sum(trainer.num_val_batches))

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        self._reached(trainer, "test", batch_idx, sum(trainer.num_test_batches))

    def on_save_checkpoint(self, trainer, pl_module, checkpoint) -> None:
        self._reached(trainer, "save")

    def on_fit_start(self, trainer, pl_module) -> None:
        if self.where == "bench":  # (the benchmarks callback, before this one, has built its benchmarks)
            (curves,) = [c for c in trainer.callbacks if type(c).__name__ == "BenchmarkCurves"]
            benchmark = curves.benchmarks[0]
            benchmark.task.test_step = self._then_reached(trainer, benchmark.task.test_step)

    def _then_reached(self, trainer, test_step):
        def scored_then_reached(batch, batch_idx):
            test_step(batch, batch_idx)
            if batch_idx == 0:  # a benchmark pass under way, the optimizer step's
                self._reached(trainer, "bench", trainer.global_step)

        return scored_then_reached


def _signal(trainer) -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def _wait(trainer) -> None:
    print("stop_at: waiting for the signal", flush=True)
    deadline = time.monotonic() + 300
    while not trainer.received_sigterm and time.monotonic() < deadline:
        time.sleep(0.1)  # (a stop outside Lightning's loops raises here, at once)


def _kill_mid_write(trainer) -> None:
    """The next torch.save (this checkpoint's) writes half its bytes where it writes them, then the run
    dies."""
    real_save = torch.save

    def half_then_killed(obj, f, *args, **kwargs):
        buffer = io.BytesIO()
        real_save(obj, buffer, *args, **kwargs)
        data = buffer.getvalue()
        if hasattr(f, "write"):
            f.write(data[: len(data) // 2])
            f.flush()
            with contextlib.suppress(io.UnsupportedOperation):  # (a file in memory has no descriptor)
                os.fsync(f.fileno())
        else:
            Path(f).write_bytes(data[: len(data) // 2])
        print(f"stop_at: killed after {len(data) // 2} of {len(data)} bytes", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    torch.save = half_then_killed


def _kill_at_adapter_folder(trainer) -> None:
    from pragexp.generation.finetuning import adapters

    def killed(new, path):
        print(f"stop_at: killed as {path} was to be replaced", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    adapters.replace_folder = killed


def _fill_disk(trainer) -> None:
    folder = Path(trainer.checkpoint_callback.dirpath)
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize - 64 * 1024
    with open(folder.parent / "filler", "wb") as filler:
        filler.truncate(0)
        filler.write(b"\0" * max(free, 0))
    print(f"stop_at: filled {free} bytes of {folder}'s disk", flush=True)
