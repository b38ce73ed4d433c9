"""What every pragexp data module shares: examples held per split, their loaders, and the data report."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar

import pytorch_lightning as pl
from torch.utils.data import DataLoader

from pragexp.data.common.datamodules.declaration import scalars, source, split_files
from pragexp.runs.record import DataRecord
from pragexp.utils.io import atomic_write_text
from pragexp.utils.resumable_sampler import ResumableLoader, ResumableSampler


class SplitsDataModule(pl.LightningDataModule):
    """Subclasses fill `self.datasets[split]` (split in `SPLITS`) in `setup` and implement `collate_fn()`;
    batches are padded per batch by that collate function. `report_dir` is where `write_report` puts
    `data_report.json` (what was read, repaired, skipped; split sizes), on rank 0 only."""

    group_names: tuple[str, ...] = ()  # what batch["group"] indexes, for per-group metrics; none by default
    # What run.json says of the data (`declared`): the dataset's name, the release's file names by split
    # (glob patterns; "all": the one file the splits are cut from, "*": any split) and the settings it names.
    dataset: ClassVar[str] = ""
    release_files: ClassVar[dict[str, tuple[str, ...]]] = {}
    declared_keys: ClassVar[tuple[str, ...]] = ()
    path_split: ClassVar[str] = "all"  # the split a `path` setting holds ("all": the splits are cut from it)

    def __init__(
        self,
        batch_size: int,
        eval_batch_size: int,
        num_workers: int,
        report_dir: str | None = None,
        limit: int | None = None,
    ):
        super().__init__()
        self.batch_size, self.eval_batch_size, self.num_workers = batch_size, eval_batch_size, num_workers
        self.report_dir = report_dir
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"data.limit={limit!r}: a positive number of test items, or null (all)")
        self.limit = limit  # score only this many test items (`scored`); None: every one
        self.datasets: dict[str, list[dict]] = {}

    def collate_fn(self) -> Callable:
        raise NotImplementedError

    @classmethod
    def declared(cls, settings: Mapping) -> DataRecord:
        """What run.json says of the data a module with these settings (its config's values) reads: files by
        split (`path`, `<split>_path`), release / sample / hub, and its `declared_keys`."""
        files = split_files(settings, cls.path_split)
        return DataRecord(
            cls.dataset, source(files, cls.release_files), files, setting=scalars(settings, cls.declared_keys)
        )

    def test_size(self) -> int | None:
        """The test items scored, once set up (None before): `limit` of them where it is set."""
        return len(self.scored("test")) if "test" in self.datasets else None

    def scored(self, split: str) -> list[dict]:
        """The split's examples a run scores. With `limit` (`data.limit`, a quick look; `suite.limit`), only
        that many of the test split, spread evenly over it in its order (examples n * k // limit, k < limit),
        so that a quick look meets every group of a split sorted by group. The limit applies after setup:
        everything else (the demonstrations drawn from other items, the data report, the groups) is the full
        data's, so each scored item is scored exactly as in a full run. Sets of examples a benchmark scores
        together (joint accuracy) that lose one of theirs are left out of their figure."""
        examples = self.datasets[split]
        if split != "test" or self.limit is None or self.limit >= len(examples):
            return examples
        return [examples[len(examples) * k // self.limit] for k in range(self.limit)]

    def missing_split_hint(self, split: str) -> str:
        """How to give the data module a split it lacks (the setting that names its file)."""
        return "its data is not set"

    def write_report(self, report: dict) -> None:
        trainer = getattr(self, "trainer", None)
        if self.report_dir and (trainer is None or trainer.is_global_zero):
            atomic_write_text(Path(self.report_dir) / "data_report.json", json.dumps(report, indent=2) + "\n")

    def _loader(self, split: str, shuffle: bool) -> DataLoader | list:
        if split not in self.datasets:
            if split == "val" and "train" not in self.datasets:
                return []  # evaluating on a test file alone: no dev split to score, and none asked for
            raise ValueError(f"no {split} split: {self.missing_split_hint(split)}")
        loader = (
            ResumableLoader if shuffle else DataLoader
        )  # a place in the epoch Lightning saves and restores
        examples = self.scored(split)
        return loader(
            examples,
            batch_size=self.batch_size if shuffle else self.eval_batch_size,
            # shuffled as RandomSampler does, in an order a run resumed mid-epoch goes on with
            sampler=ResumableSampler(examples) if shuffle else None,
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
