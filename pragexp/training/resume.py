"""Resuming a run exactly where it stopped, mid-epoch included: a run stopped by a signal (or a requeued SLURM
job) and resumed from its `last.ckpt` ends with the numbers of the same run never stopped.

Lightning restores the weights, the optimizer and its loop counters, but not what draws the random numbers:
a resumed run would shuffle its epoch anew (and train again on examples of the stopped epoch's first
batches, leaving others out) and draw other dropout masks. So:
- `ResumableSampler` (in utils, where the data modules find it) shuffles the training set as torch's `RandomSampler` does (a seed drawn from torch's
  global generator at each epoch: an uninterrupted run's numbers are unchanged) and keeps that seed, so a
  resumed run can go on with the rest of the same order;
- `ExactResume` saves in each checkpoint the global generators' states (torch, numpy, Python) and the
  epoch's seed, and, when a run resumes, puts them back for its first step and skips the batches the stopped
  run had trained.
Under DDP, Lightning's DistributedSampler (one order per epoch, from the seed) takes the sampler's place.
"""

from __future__ import annotations

import random

import numpy as np
import torch
from pytorch_lightning import Callback

from pragexp.utils.resumable_sampler import ResumableSampler, draw_seed

KEY = "pragexp_randomness"  # in the checkpoint: plain types and one tensor (loads with weights_only=True)


class ExactResume(Callback):
    def __init__(self) -> None:
        self.saved: dict | None = None
        self.first_batch_state: torch.Tensor | None = None  # torch's generator for a resumed run's first step

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        sampler = _sampler(trainer)
        name, keys, position, has_gauss, gauss = np.random.get_state()
        version, state, python_gauss = random.getstate()
        checkpoint[KEY] = {
            "torch": torch.get_rng_state(),
            "numpy": [name, keys.tolist(), int(position), int(has_gauss), float(gauss)],
            "python": [version, list(state), python_gauss],
            "epoch_seed": sampler.seed if sampler is not None else None,
        }

    def on_load_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        self.saved = checkpoint.get(KEY)

    def on_train_start(self, trainer, pl_module) -> None:
        # (Lightning calls no on_train_epoch_start when it resumes an epoch under way.)
        saved, self.saved = self.saved, None
        if saved is None:
            return  # not a resumed run
        name, keys, position, has_gauss, gauss = saved["numpy"]
        np.random.set_state((name, np.array(keys, dtype=np.uint32), position, has_gauss, gauss))
        version, state, python_gauss = saved["python"]
        random.setstate((version, tuple(state), python_gauss))
        torch.set_rng_state(saved["torch"])
        # The batches of the stopped epoch it had trained (all of them: a checkpoint of an epoch's end).
        done = trainer.fit_loop.epoch_loop.batch_progress.current.completed
        sampler = _sampler(trainer)
        if (
            sampler is not None
            and 0 < done < trainer.num_training_batches
            and saved["epoch_seed"] is not None
        ):
            sampler.resume(saved["epoch_seed"], done * trainer.train_dataloader.batch_size)  # the rest of it
        elif sampler is not None:
            # A new epoch: what an uninterrupted run draws next, the DataLoader iterator's base seed (PyTorch's
            # seeding of workers), then the sampler's seed.
            draw_seed()
            sampler.resume(draw_seed(), 0)
        # A resumed run checks validation first and sets up its loaders, which draws numbers an uninterrupted
        # run did not: the first step starts from the stopped run's state.
        self.first_batch_state = torch.get_rng_state()

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self.first_batch_state is not None:
            torch.set_rng_state(self.first_batch_state)
            self.first_batch_state = None


def _sampler(trainer) -> ResumableSampler | None:
    loader = trainer.train_dataloader
    sampler = getattr(loader, "sampler", None)
    return sampler if isinstance(sampler, ResumableSampler) else None
