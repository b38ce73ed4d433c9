"""What every pragexp data module shares: examples held per split, and their loaders."""

from __future__ import annotations

from collections.abc import Callable

import pytorch_lightning as pl
from torch.utils.data import DataLoader


class SplitsDataModule(pl.LightningDataModule):
    """Subclasses fill `self.datasets[split]` (split in train/val/test) in `setup` and implement
    `collate_fn()`; batches are padded per batch by that collate function."""

    def __init__(self, batch_size: int, eval_batch_size: int, num_workers: int):
        super().__init__()
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.datasets: dict[str, list[dict]] = {}

    def collate_fn(self) -> Callable:
        raise NotImplementedError

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        return DataLoader(
            self.datasets[split],
            batch_size=self.batch_size if shuffle else self.eval_batch_size,
            shuffle=shuffle,
            collate_fn=self.collate_fn(),
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", shuffle=False)

    def test_dataloader(self) -> DataLoader:
        return self._loader("test", shuffle=False)
