"""Stopping a job on a signal, honestly: it says what it was doing and what it kept, leaves nothing half
written, and exits with the signal's status (128 + its number: 143 for SIGTERM, 130 for Ctrl-C's SIGINT), so
that a sweep, a shell or a scheduler never counts a stopped job as done.

`SignalStop` is a context manager around one job (`pragexp.run.run`). While it is open, SIGTERM, SIGINT and,
in a job that submitit started, submitit's preemption and time-limit signal (SIGUSR2) stop the job:

- while Lightning trains (its loops are running), at the end of the current batch, through Lightning's own
  flag (the one its SIGTERM handler sets); its callback `StopCallback` then saves `checkpoints/last.ckpt`
  (whole or not at all: `training.checkpoints`), from which `ckpt_path=last` resumes. Under DDP the ranks
  first agree, at each batch's end, whether a signal has reached any of them, and all stop after the same
  batch: SLURM signals every task, each at its own moment, and a rank that stopped at the end of its batch
  while another went on to the next left both waiting for each other's collective calls, for ever (Lightning
  passes rank 0's flag on at the next step, but each rank also stops on its own flag first). After the last
  batch, while training's end is under way (the benchmark curves' last pass: `training.benchmarks`), the stop
  waits for that end and comes before the best checkpoint is validated and tested: a run resumed from a
  checkpoint of its last epoch trains nothing and calls no hook of training's end, so a pass stopped half-way
  would be missing from the curves for good. A second Ctrl-C stops at once, without a checkpoint (a second
  SIGTERM changes nothing: a scheduler may send several, and DDP ranks get the process group's and rank 0's);
- anywhere else (reading data, loading a model, evaluating), at once, by raising `Stopped`: an evaluation
  keeps what it stored (the response cache writes each answer as it arrives; a torn one is detected) and
  writes no metrics.json or predictions.jsonl;
- once the test has ended (results being written), the job finishes writing them first.

While its loops run, Lightning puts its own SIGTERM handler in place; `StopCallback` puts this one back
(Lightning's broadcasts from inside the handler, which hangs DDP ranks that get SIGTERM twice). Rank 0 passes
the stop on to the DDP ranks Lightning started (trainer=ddp), as Lightning does; SLURM signals each task
itself.

On submitit's signal the job then asks submitit to requeue it (submitit's own handler: `scontrol requeue` on
SLURM; the local executor's requeue code), and the requeued job goes on from the checkpoint
(`resume_requeued`).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

from pytorch_lightning import Callback
from pytorch_lightning.trainer.states import RunningStage, TrainerFn
from pytorch_lightning.utilities.exceptions import SIGTERMException
from pytorch_lightning.utilities.rank_zero import rank_zero_only

from pragexp.training.checkpoints import save_tuned_weights

log = logging.getLogger(__name__)
LAST = "last.ckpt"  # Lightning's name for the checkpoint `ckpt_path=last` resumes from


class Stopped(BaseException):
    """A signal stopped the job where it was (a BaseException: `except Exception` does not swallow it)."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def submitit_signal() -> int | None:
    """The signal submitit sends a job it started before its time limit or on preemption (SIGUSR2, unless
    SUBMITIT_PREEMPT_SIGNAL names another); None outside such a job."""
    if "SUBMITIT_EXECUTOR" not in os.environ:
        return None
    return int(getattr(signal, "SIG" + os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2")))


def resume_requeued(run_dir: Path, train: bool, ckpt_path: str | None) -> bool:
    """Whether a training job resumes from its dir's last checkpoint: it does when submitit started it again
    (requeued) in the dir of an unfinished run (`checkpoints/last.ckpt`, no metrics.json) and no other
    checkpoint is asked for."""
    last = run_dir / "checkpoints" / LAST
    if not (submitit_signal() and train and not ckpt_path and last.is_file()):
        return False
    if (run_dir / "metrics.json").exists():
        return False  # a finished run: this job starts afresh
    log.warning("requeued job: resuming the interrupted run from %s", last)
    return True


class SignalStop:
    """See the module docstring. `run_dir`: the job's dir; `train`: whether it trains (a stop then saves a
    checkpoint to resume from); `kept`: what else the job keeps, one phrase each, asked when it stops (the
    answers in its response caches: `generation.cache.cached_backend.kept`). Set `trainer` once it is built;
    put `callback` first among the trainer's callbacks."""

    def __init__(self, run_dir: Path, train: bool, kept: Callable[[], list[str]] = list):
        self.run_dir, self.train, self.kept = Path(run_dir), train, kept
        self.trainer = None
        self.callback = StopCallback(self)
        self.signum: int | None = None
        self.doing = "starting"  # what the job was doing when it stopped
        self.saved: Path | None = None  # the checkpoint a stop saved
        self.saving = self.finishing = False  # no stopping half-way through writing these
        self.looping = False  # Lightning's training loops are running: they stop at the end of a batch
        self._previous: dict[int, object] = {}

    def __enter__(self) -> SignalStop:
        if threading.current_thread() is threading.main_thread():  # Python's rule for signal handlers
            for signum in (signal.SIGTERM, signal.SIGINT, submitit_signal()):
                if signum is not None:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        previous, self._previous = self._previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if self.signum is None:
            return  # no signal: whatever ended the job goes on up
        if exc is not None and not isinstance(exc, (Stopped, SIGTERMException)):
            log.warning("while stopping: %r", exc)  # e.g. another rank left a collective call
        finished = exc is None  # the signal came while the results were being written: they are complete
        requeue = self.signum == submitit_signal() and not finished
        if self._rank_zero():
            print(self.message(finished, requeue), flush=True)
        if requeue and callable(previous.get(self.signum)):
            previous[self.signum](self.signum, None)  # submitit's handler: requeues this job, then exits
        if not (finished and self.signum == submitit_signal()):
            raise SystemExit(128 + self.signum)

    def _handle(self, signum: int, frame) -> None:
        if self.saving or self.finishing:
            self.signum = self.signum or signum  # stop once the checkpoint or the results are written
            return
        if self.signum is not None:
            if signum == self.signum == signal.SIGINT:
                raise Stopped(signum)  # Ctrl-C again: at once
            return  # already stopping (a scheduler's repeats; a DDP rank: the process group's and rank 0's)
        self.signum = signum
        launcher = getattr(getattr(self.trainer, "strategy", None), "launcher", None)
        if launcher is not None:
            launcher.kill(signal.SIGTERM)  # the DDP ranks it started (none on the ranks themselves)
        connector = getattr(self.trainer, "_signal_connector", None)
        if self.looping and connector is not None:
            if self.trainer.world_size == 1:
                connector.received_sigterm = True  # Lightning's loops stop after this batch
            return  # (DDP: after the batch at whose end the ranks agree to stop, `agree`)
        raise Stopped(signum)

    def agree(self, trainer) -> None:
        """At a batch's end under DDP (every rank calls it, in step): whether a signal has reached any rank;
        then every rank's loops stop after this batch."""
        if self.looping and trainer.world_size > 1:
            if trainer.strategy.reduce_boolean_decision(self.signum is not None, all=False):
                trainer._signal_connector.received_sigterm = True

    def take_over(self) -> None:
        """This handler for SIGTERM again, in place of the one Lightning puts there while its loops run."""
        if threading.current_thread() is threading.main_thread() and signal.SIGTERM in self._previous:
            signal.signal(signal.SIGTERM, self._handle)

    def _rank_zero(self) -> bool:
        return self.trainer.is_global_zero if self.trainer is not None else rank_zero_only.rank == 0

    def message(self, finished: bool, requeue: bool) -> str:
        """One line: what stopped the job, what it was doing and what it kept."""
        kept = []
        last = self.saved or self.run_dir / "checkpoints" / LAST
        if self.train and last.is_file():
            kept.append(f"{last} (resume with ckpt_path=last hydra.run.dir={self.run_dir})")
        kept += self.kept()
        line = f"pragexp: stopped by {signal.Signals(self.signum).name} while {self.doing}; "
        nothing = "no checkpoint yet" if self.train else "nothing"
        line += f"kept: {'; '.join(kept) or nothing}; "
        line += "metrics.json written (the run had finished)" if finished else "no metrics.json written"
        if requeue:  # a training job goes on from its checkpoint; an evaluation runs again, from its cache
            line += "; requeueing the job" + (
                ", which resumes from its last checkpoint" if self.train else ""
            )
        return line


class StopCallback(Callback):
    """Records what the trainer was doing when a stop reached it, saves a checkpoint to resume from when it
    was training, and holds further signals while the test's results are written."""

    def __init__(self, stop: SignalStop):
        self.stop = stop

    def setup(self, trainer, pl_module, stage: str) -> None:
        if self.stop.signum is not None:  # a signal that came as the previous stage ended
            raise Stopped(self.stop.signum)

    # Lightning has put its signal handlers in place by each of these.
    def on_sanity_check_start(self, trainer, pl_module) -> None:
        self.stop.take_over()
        self.stop.looping = True  # (a sanity check comes only before fitting)

    def on_train_start(self, trainer, pl_module) -> None:
        self.stop.take_over()
        self.stop.looping = True

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.stop.agree(trainer)

    def on_validation_batch_end(
        self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0
    ) -> None:
        self.stop.agree(trainer)

    def on_fit_end(self, trainer, pl_module) -> None:
        self.stop.looping = False  # (not at on_train_end: see the module docstring)

    def on_validation_start(self, trainer, pl_module) -> None:
        self.stop.take_over()

    def on_test_start(self, trainer, pl_module) -> None:
        self.stop.take_over()

    def on_test_end(self, trainer, pl_module) -> None:
        self.stop.finishing = True  # first among the callbacks: before predictions.jsonl is written

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        stop = self.stop
        stop.looping = False
        if stop.signum is None:
            if not isinstance(exception, SIGTERMException):
                return  # an error, not a stop
            stop.signum = signal.SIGTERM  # no signal here: another rank's stop reached this one (DDP)
        stop.doing = describe(trainer)
        # Stopped at the end of a batch (not at once, by Stopped): the weights and the loops' state agree.
        if stop.train and trainer.state.fn == TrainerFn.FITTING and isinstance(exception, SIGTERMException):
            kept = _checkpoint_dir(trainer) / LAST
            if _batch_in_epoch(trainer) == 0 and _saved_here(trainer, kept):
                stop.saved = kept  # between epochs: the checkpoint callback has just written it
                return
            stop.saving = True
            try:
                stop.saved = save_resumable(trainer)
            finally:
                stop.saving = False


def save_resumable(trainer) -> Path:
    """`checkpoints/last.ckpt`, written whole or not at all (`training.checkpoints.DurableCheckpointIO`)."""
    callback = trainer.checkpoint_callback
    path = _checkpoint_dir(trainer) / LAST
    if callback is not None:
        callback.last_model_path = str(path)  # saved in the checkpoint: a resumed run overwrites this file
    save_tuned_weights(trainer, path)  # a tuned LLM's weights beside it, first (`training.checkpoints`)
    trainer.save_checkpoint(path)
    return path


def _saved_here(trainer, last: Path) -> bool:
    """Whether the checkpoint callback wrote `last` at this very step (at the end of the epoch just
    finished)."""
    callback = trainer.checkpoint_callback
    return (
        last.is_file()
        and getattr(callback, "last_model_path", None) == str(last)
        and getattr(callback, "_last_global_step_saved", None) == trainer.global_step
    )


def describe(trainer) -> str:
    """'fitting epoch 2 step 340, batch 12 of 170', 'validating, batch 3 of 9', 'testing, batch 5 of 40'."""
    stage, fitting = trainer.state.stage, trainer.state.fn == TrainerFn.FITTING
    if stage == RunningStage.TRAINING:
        batch = _batch_in_epoch(trainer)
        where = f"fitting epoch {trainer.current_epoch} step {trainer.global_step}"
        return f"{where}, batch {batch} of {_number(trainer.num_training_batches)}"
    if stage == RunningStage.SANITY_CHECKING:
        return "checking validation before fitting"
    if stage == RunningStage.VALIDATING:
        loop = trainer.fit_loop.epoch_loop.val_loop if fitting else trainer.validate_loop
        where = f"validating in fitting epoch {trainer.current_epoch}" if fitting else "validating"
        return _batch_of(where, loop.batch_progress.current.ready, sum(trainer.num_val_batches))
    if stage == RunningStage.TESTING:
        batch = trainer.test_loop.batch_progress.current.ready
        return _batch_of("testing", batch, sum(trainer.num_test_batches))
    return "setting up fitting" if fitting else "setting up"


def _checkpoint_dir(trainer) -> Path:
    callback = trainer.checkpoint_callback
    return Path(
        callback.dirpath if callback and callback.dirpath else Path(trainer.default_root_dir) / "checkpoints"
    )


def _batch_in_epoch(trainer) -> int:
    """The batches of the epoch under way that the trainer has taken; 0 between epochs (the next one's)."""
    epochs = trainer.fit_loop.epoch_progress.current
    batch = trainer.fit_loop.epoch_loop.batch_progress.current.ready
    return batch if epochs.started > epochs.completed else 0


def _batch_of(where: str, batch: int, batches) -> str:
    return f"{where}, batch {batch} of {_number(batches)}" if batch else f"{where} (before its first batch)"


def _number(batches) -> str:
    return str(int(batches)) if batches != float("inf") else "?"
