"""The intention items as an evaluation-only data module: every item is a test example.

Batches are `PromptBatch`es (`pragexp.batches.types`; "group": the phenomenon): the items as the intentions'
prompt templates read them (`prompt_items.prompt_item`), for `model=llm`. `group_names` are the phenomena
(metric keys `test/acc/<phenomenon>`), `describe(split, index)` the item behind a prediction,
`prompt_items(split)` every item of a split (none but test), and `data_report.json` in `report_dir` says what
was read, repaired and skipped.
"""

from __future__ import annotations

import dataclasses
import logging

from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.intentions.io import PHENOMENA, IntentionItem, read_intentions_csv
from pragexp.data.intentions.prompt_items import prompt_item
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)


class IntentionsDataModule(PromptDataModule):
    sampling_unit = SamplingUnit(
        "item", "an item's replies (every sample and temperature) or option orders are one row, its mean"
    )
    dataset = "intentions"
    path_split = "test"
    release_files = {"test": ("hu_gpt4augmented_turn2_data.csv",)}
    declared_keys = ("phenomena",)

    def __init__(
        self,
        path: str | None = None,
        phenomena: list[str] | None = None,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path, self.phenomena = path, phenomena
        self.items: list[IntentionItem] = []
        self.group_names: tuple[str, ...] = ()
        self.report: dict = {}

    def setup(self, stage: str | None = None) -> None:
        if self.items:
            return
        if not self.path:
            raise ValueError(
                "data.path is not set: pass data.path=/path/to/hu_gpt4augmented_turn2_data.csv "
                "(the release of github.com/Akhila-Yerukola/generative-intention-resolution)"
            )
        items, read = read_intentions_csv(self.path)
        if self.phenomena:
            unknown = sorted(set(self.phenomena) - {i.phenomenon for i in items})
            if unknown:
                raise ValueError(f"data.phenomena: {unknown} not in {self.path}")
            items = [i for i in items if i.phenomenon in self.phenomena]
        if not items:
            raise ValueError(f"{self.path}: no usable item ({read.summary()})")
        present = {i.phenomenon for i in items}
        self.group_names = tuple(p for p in PHENOMENA if p in present) + tuple(sorted(present - {*PHENOMENA}))
        self.items = items
        group = {name: g for g, name in enumerate(self.group_names)}
        prompts = [prompt_item(item, i) for i, item in enumerate(items)]
        self.datasets["test"] = [
            {"index": i, "cluster": i, "group": group[item.phenomenon], "label": prompt.label, "item": prompt}
            for i, (item, prompt) in enumerate(zip(items, prompts, strict=True))
        ]
        self.report = {
            **read.summary(),
            "items": len(items),
            "per_phenomenon": {p: sum(i.phenomenon == p for i in items) for p in self.group_names},
        }
        for entry in read.repaired:
            log.warning("%s:%s: repaired %s: %s", self.path, entry["line"], entry["item"], entry["what"])
        for entry in read.skipped:
            log.warning("%s:%s: skipped: %s", self.path, entry["line"], entry["reason"])
        log.info(
            "intentions from %s: %d rows read, %d repaired, %d skipped, %d items %s",
            self.path,
            read.rows_read,
            len(read.repaired),
            len(read.skipped),
            len(items),
            self.report["per_phenomenon"],
        )
        self.write_report(self.report)

    def describe(self, split: str, index: int) -> dict:
        """The item behind a prediction, for predictions.jsonl and W&B tables."""
        item = dataclasses.asdict(self.items[index])
        return {
            k: item[k] for k in ("item_id", "phenomenon", "utterance", "true_intention", "literal_intention")
        }
