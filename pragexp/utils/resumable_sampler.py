"""The training sampler and loader that can go on with the rest of an interrupted epoch
(`pragexp.training.resume` says why and restores the random generators).

`ResumableSampler` shuffles as torch's `RandomSampler` does and keeps the epoch's seed. `ResumableLoader` is
the training DataLoader Lightning can save and restore (it has `state_dict` and `load_state_dict`, Lightning's
test of a resumable loader): its state is the epoch's seed and the batches it has handed out, and a loader
restored part-way through an epoch hands out the rest of the same order. With another sampler whose order the
epoch alone fixes (DDP's `DistributedSampler`, which Lightning puts in its place), it draws and drops the
batches already handed out."""

from __future__ import annotations

import torch
from torch.utils.data import DataLoader, RandomSampler


class ResumableSampler(RandomSampler):
    def __init__(self, data_source) -> None:
        super().__init__(data_source)
        self.seed: int | None = None  # the order of the epoch under way
        self._resume: tuple[int, int] | None = None  # (seed, indices to skip) for the next epoch

    def resume(self, seed: int, skip: int) -> None:
        self._resume = (seed, skip)

    def __iter__(self):
        if self._resume is not None:
            (self.seed, skip), self._resume = self._resume, None
        else:  # RandomSampler's draw, at the same moment (the first index asked for)
            self.seed, skip = draw_seed(), 0
        generator = torch.Generator()
        generator.manual_seed(self.seed)
        yield from torch.randperm(len(self.data_source), generator=generator).tolist()[skip:]


class ResumableLoader(DataLoader):
    """See the module docstring. Built as a DataLoader is (Lightning rebuilds it so under DDP). A state loaded
    after the iterator was made (Lightning makes it early where the run asks for its number of steps, and then
    loads no state: `training.resume` loads it) still applies: the skip is made at the iterator's first
    batch."""

    _taken = 0  # batches the current iterator has handed out
    # batches the current iterator skips at its first batch (a place restored part-way through an epoch)
    _skip = 0

    def state_dict(self) -> dict:
        seed = self.sampler.seed if isinstance(self.sampler, ResumableSampler) else None
        return {"seed": seed, "batches": self._taken}

    def load_state_dict(self, state: dict) -> None:
        batches = int(state.get("batches", 0))
        if not 0 < batches < len(self):
            return  # saved between epochs: the next one is drawn afresh
        self._skip = batches
        if isinstance(self.sampler, ResumableSampler) and state.get("seed") is not None:
            self.sampler.resume(state["seed"], batches * self.batch_size)  # (it skips them itself)

    @property
    def resumed(self) -> bool:
        """Whether the iterator goes on with an epoch restored part-way through."""
        return self._skip > 0

    def __iter__(self):
        self._taken = 0
        return _Counted(
            super().__iter__(), self
        )  # made at once, as a DataLoader's (it draws the workers' seed)


class _Counted:
    """A loader's iterator: makes the loader's skip at its first batch and counts the batches it hands out."""

    def __init__(self, iterator, loader: ResumableLoader):
        self.iterator, self.loader = iterator, loader

    def __iter__(self):
        return self

    def __next__(self):
        loader = self.loader
        if loader._skip:
            skip, loader._skip = loader._skip, 0
            if not isinstance(loader.sampler, ResumableSampler):
                for _ in range(skip):
                    next(self.iterator)
            loader._taken = skip
        batch = next(self.iterator)
        loader._taken += 1
        return batch

    def __len__(self) -> int:
        return len(self.iterator)


def draw_seed() -> int:
    """A seed from torch's global generator, drawn as RandomSampler and the DataLoader do."""
    return int(torch.empty((), dtype=torch.int64).random_().item())
