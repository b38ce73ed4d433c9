"""The training sampler that can go on with the rest of an interrupted epoch (`pragexp.training.resume` says why
and restores it): it shuffles as torch's `RandomSampler` does and keeps the epoch's seed."""

from __future__ import annotations

import torch
from torch.utils.data import RandomSampler


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


def draw_seed() -> int:
    """A seed from torch's global generator, drawn as RandomSampler and the DataLoader do."""
    return int(torch.empty((), dtype=torch.int64).random_().item())
