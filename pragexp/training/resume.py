"""Resuming a run exactly where it stopped, mid-epoch or mid-validation included: a run stopped by a signal
(or a requeued SLURM job) and resumed from its `last.ckpt` ends with the numbers of the same run never
stopped.

Lightning restores the weights, the optimizer, the callbacks' states and its loop counters, but not what draws
the random numbers, nor everything its loops need to go on from any point:
- the training order: the training loader (`utils.resumable_sampler.ResumableLoader`) is one Lightning saves
  and restores, so a resumed run goes on with the rest of the same shuffled order (a run resumed without it
  would shuffle its epoch anew, training again on examples of the stopped epoch's first batches and leaving
  others out);
- the random generators: `ExactResume` saves their states (torch, numpy, Python) in each checkpoint and puts
  them back for the resumed run's first step, so it draws the dropout masks and next epochs' orders the
  stopped run would have drawn (a checkpoint saved part-way through a validation holds their states as that
  validation found them, and the resumed run draws from there whatever that validation and the rest of the run
  draw). Under DDP every rank's own: the ranks start from the same seed but part at their first batch (dropout
  draws as many numbers as its rank's batch has, and the ranks' batches are padded to different lengths), so
  the checkpoint, which rank 0 writes, holds every rank's states, and each rank puts back its own;
- a validation stopped part-way: Lightning resumes a checkpoint saved after a validation batch as if that
  validation had ended (it skips it), so the epoch's end would find no validation metrics (early stopping
  stops the run with "Early stopping conditioned on metric val/... which is not available") and the checkpoint
  callback would never see this epoch's score. `ExactResume` saves such a checkpoint as one taken inside the
  validation's first batch, which Lightning resumes by running that validation again from its start, whole;
  the callbacks' states in it are those of the previous epoch's end, which this validation's end then updates
  as it would have;
- a decision to stop: `trainer.should_stop` (set by early stopping, or by a task with nothing more to learn)
  is not in Lightning's checkpoints, so a run stopped after its last epoch (while testing, say) and resumed
  would train on. `ExactResume` saves it and puts it back.
"""

from __future__ import annotations

import logging
import random

import numpy as np
import torch
import torch.distributed as dist
from pytorch_lightning import Callback
from pytorch_lightning.trainer.states import RunningStage, TrainerFn

from pragexp.utils.resumable_sampler import ResumableLoader, ResumableSampler, draw_seed

log = logging.getLogger(__name__)
KEY = "pragexp_randomness"  # in the checkpoint: plain types and one tensor (loads with weights_only=True)
VAL_PROGRESS = "epoch_loop.val_loop.batch_progress"  # Lightning's counters of the fit's validation loop


class ExactResume(Callback):
    def __init__(self) -> None:
        self.saved: dict | None = None
        self.first_batch_state: torch.Tensor | None = None  # torch's generator for a resumed run's first step
        # The generators as a validation that comes next finds them; the training loader's state, as saved.
        self.before_validation: dict | None = None
        self.loader_states: list[dict] = []

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self.before_validation = random_states()  # (the last hook before a validation draws anything)

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        states = random_states()
        if validating_part_way(trainer):
            # Resumed, the validation runs again whole, from the generators' states it started from.
            checkpoint["loops"]["fit_loop"][VAL_PROGRESS] = validation_to_run_again(trainer)
            states = {**(self.before_validation or states), "validation": "again"}
        checkpoint[KEY] = {"ranks": every_ranks(trainer, states), "should_stop": bool(trainer.should_stop)}

    def on_load_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        self.saved = this_ranks(trainer, checkpoint.get(KEY))
        fit_loop = checkpoint.get("loops", {}).get("fit_loop", {})
        self.loader_states = fit_loop.get("state_dict", {}).get("combined_loader", [])

    def on_train_start(self, trainer, pl_module) -> None:
        # (Lightning calls no on_train_epoch_start when it resumes an epoch under way.)
        saved, self.saved = self.saved, None
        if saved is None:
            return  # not a resumed run
        restore_random_states(saved)
        trainer.should_stop = trainer.should_stop or saved.get("should_stop", False)
        loader, sampler = _training_loader(trainer)
        if loader is not None and len(self.loader_states) == 1:
            loader.load_state_dict(self.loader_states[0])  # (where Lightning made the loader before it could)
        if saved.get("validation") == "again":
            # Nothing draws before the validation runs again; the rest of the run follows from it as it did.
            self.before_validation = random_states()
            return
        # The batches of the stopped epoch it had trained (all of them: a checkpoint of an epoch's end).
        done = trainer.fit_loop.epoch_loop.batch_progress.current.completed
        if sampler is not None and 0 < done < trainer.num_training_batches:
            if (
                not loader.resumed and saved.get("epoch_seed") is not None
            ):  # older checkpoints: the seed alone
                sampler.resume(saved["epoch_seed"], done * loader.batch_size)
        elif sampler is not None:
            # A new epoch: what an uninterrupted run draws next, the DataLoader iterator's base seed
            # (PyTorch's seeding of workers), then the sampler's seed.
            draw_seed()
            sampler.resume(draw_seed(), 0)
        # A resumed run checks validation first and sets up its loaders, which draws numbers an uninterrupted
        # run did not: the first step starts from the stopped run's state.
        self.first_batch_state = torch.get_rng_state()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self.first_batch_state is not None:
            torch.set_rng_state(self.first_batch_state)
            self.first_batch_state = None


def random_states() -> dict:
    """The global generators' states (torch, numpy, Python) as plain data."""
    name, keys, position, has_gauss, gauss = np.random.get_state()
    version, state, python_gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": [name, keys.tolist(), int(position), int(has_gauss), float(gauss)],
        "python": [version, list(state), python_gauss],
    }


def every_ranks(trainer, states: dict) -> list[dict]:
    """`states` of every DDP rank, in rank order (a collective call: every rank saves the checkpoint, as
    Lightning has them do; rank 0 alone writes it); [states] in a run of one process."""
    if trainer.world_size == 1 or not (dist.is_available() and dist.is_initialized()):
        return [states]
    ranks: list = [None] * trainer.world_size
    dist.all_gather_object(ranks, states)
    return ranks


def this_ranks(trainer, saved: dict | None) -> dict | None:
    """The generators' states this rank saved, with what all ranks share (`should_stop`). A checkpoint of a
    run with another number of ranks cannot resume exactly: each rank then takes rank 0's. (A checkpoint of an
    older pragexp holds rank 0's alone, without "ranks".)"""
    if saved is None or "ranks" not in saved:
        return saved
    ranks, rank = saved["ranks"], trainer.global_rank
    if len(ranks) != trainer.world_size:
        log.warning(
            "the checkpoint holds the random generators of %d ranks, this run has %d: every rank resumes "
            "with rank 0's (the run goes on, not exactly as the stopped one would have)",
            len(ranks),
            trainer.world_size,
        )
        rank = 0
    return {**ranks[rank], "should_stop": saved["should_stop"]}


def restore_random_states(states: dict) -> None:
    name, keys, position, has_gauss, gauss = states["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), position, has_gauss, gauss))
    version, state, python_gauss = states["python"]
    random.setstate((version, tuple(state), python_gauss))
    torch.set_rng_state(states["torch"])


def validating_part_way(trainer) -> bool:
    """Whether a validation of fitting is under way and has not reached its end (where the callbacks that save
    checkpoints save theirs: Lightning resumes those as they are)."""
    if trainer.state.fn != TrainerFn.FITTING or trainer.state.stage != RunningStage.VALIDATING:
        return False
    return not trainer.fit_loop.epoch_loop.val_loop.batch_progress.is_last_batch


def validation_to_run_again(trainer) -> dict:
    """The validation loop's counters as Lightning saves them inside a validation's first batch (started, not
    processed), which it resumes by running that validation from its start."""
    progress = trainer.fit_loop.epoch_loop.val_loop.batch_progress
    before = (
        progress.total.completed - progress.current.completed
    )  # this epoch's earlier validations' batches
    return {
        "total": {"ready": before + 1, "started": before + 1, "processed": before, "completed": before},
        "current": {"ready": 1, "started": 1, "processed": 0, "completed": 0},
        "is_last_batch": False,
    }


def _training_loader(trainer) -> tuple[ResumableLoader | None, ResumableSampler | None]:
    loader = trainer.train_dataloader
    if not isinstance(loader, ResumableLoader):
        return None, None
    sampler = loader.sampler
    return loader, sampler if isinstance(sampler, ResumableSampler) else None
