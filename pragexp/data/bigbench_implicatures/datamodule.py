"""BIG-bench's `implicatures` task as an evaluation-only data module for an LLM (task=bigbench_implicatures):
a local JSON-lines copy (`path`) or the hub copy through `datasets` (`hub_name`, `hub_config`, `hub_split`);
offline without a local copy, the run stops naming `data.path`. Every example is a test item whose options are
the task's targets ("yes", "no"), scored as lm-evaluation-harness scores BIG-bench's multiple choice: each
option after the example's text and a space (conf/prompt/bigbench_implicatures.yaml)."""

from __future__ import annotations

import logging

from pragexp.data.bigbench_implicatures.io import HUB_CONFIG, HUB_NAME, HUB_SPLIT, load_hub, read_jsonl
from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.prompting import PromptItem
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)


class BigBenchImplicaturesDataModule(PromptDataModule):
    sampling_unit = SamplingUnit(
        "pair", "each example is its own utterance-response pair (LUDWIG's source); one row per pair"
    )
    dataset = "bigbench_implicatures"
    path_split = "test"
    declared_keys = ()  # no release file names: a local file is a copy of the hub's (`sample`)

    def __init__(
        self,
        path: str | None = None,
        hub_name: str = HUB_NAME,
        hub_config: str = HUB_CONFIG,
        hub_split: str = HUB_SPLIT,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path, self.hub = path, (hub_name, hub_config, hub_split)
        self.examples: list = []

    def setup(self, stage: str | None = None) -> None:
        if self.examples:
            return
        examples, read = read_jsonl(self.path) if self.path else load_hub(*self.hub)
        self.examples = examples
        self.datasets["test"] = [
            {
                "index": i,
                "cluster": i,
                "group": -1,
                "view": -1,
                "label": e.true_index,
                "item": self._item(i, e),
            }
            for i, e in enumerate(self.examples)
        ]
        self.write_report(
            {"source": read.source, "rows_read": read.rows_read, "examples": len(self.examples)}
        )
        log.info("BIG-bench implicatures from %s: %d examples", read.source, len(self.examples))

    @staticmethod
    def _item(index: int, example) -> PromptItem:
        return PromptItem(index, {"context": example.context}, example.options, example.true_index)

    def describe(self, split: str, index: int) -> dict:
        example = self.examples[index]
        return {"idx": example.idx, "context": example.context, "true_option": example.true_option}
