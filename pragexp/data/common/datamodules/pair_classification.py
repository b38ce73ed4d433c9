"""A text-pair classification data set read from train/val/test files or from the hub (NLI, BoolQ).

Sources, in this order:

- local files `train_path`, `val_path`, `test_path` (JSON lines, or TSV for `.tsv`/`.txt`; see
  pragexp.data.common.files.pair_readers). Any one may be left out: no `val_path` carves the dev split out of
  train (below); no `train_path` is for evaluating a checkpoint; no `test_path` means no test.
- with no path at all, the hub dataset `hub_name` through `datasets`, its splits named by
  `hub_splits` (train/val/test -> hub split name, or null to carve dev out of train). Offline,
  this stops with an error naming `data.train_path`.

Dev carved from train: a `dev_fraction` of the labelled training rows, drawn with `split_seed`
(independent of the training seed), so the test split can be the released dev set, whose labels
are public (the released test sets of MNLI and BoolQ have none).

Writes `data_report.json` (rows read, rows without a gold label, kept rows per source, split sizes,
label counts) in `report_dir`.
"""

from __future__ import annotations

import logging

from pragexp.data.common.datamodules.text_classification import TextClassificationDataModule
from pragexp.data.common.files.pair_readers import PairRow, PairSchema, read_pair_file, read_pair_hub
from pragexp.data.common.splits import SPLITS, carve_dev
from pragexp.utils.errors import DataFormatError

log = logging.getLogger(__name__)


class PairClassificationDataModule(TextClassificationDataModule):
    """Subclasses set (as class attributes) `schema`, `default_label_names` and `default_label_slugs`
    in class-index order, the hub defaults, `file_hint`, the released file to point the user at, and their
    `sampling_unit` with `unit_text`, the text (first or second) that its rows share."""

    schema: PairSchema
    default_label_names: tuple[str, ...] = ()
    default_label_slugs: tuple[str, ...] = ()
    default_hub_name: str | None = None
    default_hub_splits: dict | None = None
    file_hint: str = "/path/to/train.jsonl"
    unit_text: str  # "first" or "second": the text whose rows make one sampling unit (`sampling_unit`)

    def __init__(
        self,
        train_path: str | None = None,
        val_path: str | None = None,
        test_path: str | None = None,
        hub_name: str | None = None,
        hub_splits: dict | None = None,
        dev_fraction: float = 0.1,
        split_seed: int = 0,
        **common,  # TextClassificationDataModule's: tokenizer, tokenizer_ckpt, max_length, batch sizes, ...
    ):
        super().__init__(
            label_names=self.default_label_names,
            label_slugs=self.default_label_slugs,
            **common,
        )
        self.paths = {"train": train_path, "val": val_path, "test": test_path}
        self.hub_name = hub_name or self.default_hub_name
        self.hub_splits = dict(hub_splits if hub_splits is not None else self.default_hub_splits or {})
        unknown = set(self.hub_splits) - set(SPLITS)
        if unknown:
            raise ValueError(f"data.hub_splits has keys {sorted(unknown)}; use train, val, test")
        if not 0 < dev_fraction < 1:
            raise ValueError(f"data.dev_fraction must be between 0 and 1, got {dev_fraction}")
        self.dev_fraction, self.split_seed = dev_fraction, int(split_seed)

    # -- reading --------------------------------------------------------------------------------
    def _read_sources(self) -> tuple[dict[str, list[tuple[PairRow, int]]], dict[str, dict]]:
        rows, reports = {}, {}
        if any(self.paths.values()):
            for split, path in self.paths.items():
                if path:
                    rows[split], read = read_pair_file(path, self.schema, setting=f"data.{split}_path")
                    reports[split] = read.as_dict(len(rows[split]))
            return rows, reports
        if not self.hub_name:
            raise ValueError(f"set data.train_path={self.file_hint} (and data.test_path), or data.hub_name")
        for split, hub_split in self.hub_splits.items():
            if not hub_split:
                continue
            try:
                rows[split], read = read_pair_hub(self.hub_name, hub_split, self.schema)
            except RuntimeError as err:
                raise RuntimeError(
                    f"data.train_path is not set and {err}; set data.train_path={self.file_hint} "
                    "(and data.val_path, data.test_path) to the released files"
                ) from err
            reports[split] = read.as_dict(len(rows[split]))
        return rows, reports

    def _make_splits(self) -> None:
        rows, reports = self._read_sources()
        for split, kept in rows.items():
            if not kept:
                raise DataFormatError(
                    reports[split]["source"],
                    f"no row has a gold label ({reports[split]['rows_read']} rows read); "
                    f"the {split} split needs labelled data",
                )
        dev = "given" if "val" in rows else None  # data.val_path or data.hub_splits.val
        if "val" not in rows and "train" in rows:
            train_idx, dev_idx = carve_dev(len(rows["train"]), self.dev_fraction, self.split_seed)
            train = rows["train"]
            rows["train"], rows["val"] = [train[i] for i in train_idx], [train[i] for i in dev_idx]
            dev = f"carved from train: dev_fraction {self.dev_fraction}, split_seed {self.split_seed}"
        self.splits = {s: rows[s] for s in SPLITS if s in rows}
        self.report = {
            "data": self.schema.name,
            "sources": reports,
            "dev": dev,
            "no_gold_label": sum(r["no_gold_label"] for r in reports.values()),
            **self.split_summary(),
        }
        log.info(
            "%s: %s; rows without a gold label skipped: %d; split sizes %s",
            self.schema.name,
            ", ".join(f"{s} from {r['source']}" for s, r in reports.items()),
            self.report["no_gold_label"],
            self.report["split_sizes"],
        )

    def _texts(self, split: str) -> tuple[list[str], list[str] | None]:
        rows = [row for row, _ in self.splits[split]]
        return [r.first for r in rows], [r.second for r in rows]

    def _unit(self, row: PairRow) -> str:
        return " ".join(getattr(row, self.unit_text).split())

    def _prompt_fields(self, row: PairRow) -> dict[str, str]:
        first, second = self.schema.prompt_names
        return {first: row.first, second: row.second}

    def missing_split_hint(self, split: str) -> str:
        if split == "val":
            return "set data.val_path, or data.train_path (dev is then carved out of it)"
        return f"set data.{split}_path"
