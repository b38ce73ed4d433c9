"""The release's split files read, and split the way `data.splits` says:

- `released`: `data.path` holds the release's train.jsonl, val.jsonl and test.jsonl (any may be absent:
  evaluating a checkpoint needs only the test file);
- `carved`: only train.jsonl is used; dev and test are carved out of it by topic (topics stay disjoint,
  as in the release), `carve.val` and `carve.test` of its questions each, drawn with `carve.seed`. Every
  output says so (the config, data_report.json, the log).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pragexp.data.common.splits import SPLITS, carve_groups
from pragexp.data.pragmaticqa.io import Conversation, read_conversations, split_files

SPLIT_MODES = ("released", "carved")


@dataclass(frozen=True)
class Release:
    path: str | None
    mode: str = "released"
    carve: tuple[float, float, int] = (0.15, 0.15, 0)  # val and test shares of the questions, seed

    @classmethod
    def from_config(cls, path: str | None, mode: str, carve: Mapping | None) -> Release:
        carve = {"val": 0.15, "test": 0.15, "seed": 0, **(carve or {})}
        return cls(path, mode, (float(carve["val"]), float(carve["test"]), int(carve["seed"])))

    def __post_init__(self):
        if self.mode not in SPLIT_MODES:
            raise ValueError(f"data.splits={self.mode}: one of {', '.join(SPLIT_MODES)}")

    def files(self) -> dict[str, Path]:
        if not self.path:
            raise ValueError(
                "set data.path=/path/to/PragmatiCQA/data (the folder holding train.jsonl, val.jsonl, "
                "test.jsonl)"
            )
        files = split_files(self.path)
        if not files:
            raise FileNotFoundError(f"data.path={self.path}: no train.jsonl, val.jsonl or test.jsonl there")
        return files

    def read(self) -> tuple[dict[str, list[Conversation]], dict[str, dict]]:
        """Each file's conversations and its read report, by the split its name says."""
        conversations, reports = {}, {}
        for split, file in self.files().items():
            conversations[split], report = read_conversations(file)
            reports[split] = report.as_dict()
        return conversations, reports

    def split(
        self, conversations: dict[str, list[Conversation]]
    ) -> tuple[dict[str, list[Conversation]], dict]:
        """The splits to use, and what the report says about them."""
        if self.mode == "released":
            return conversations, {"splits": "released", "files": sorted(conversations)}
        if "train" not in conversations:
            raise FileNotFoundError(f"data.splits=carved needs {Path(self.path) / 'train.jsonl'}")
        train = conversations["train"]
        val, test, seed = self.carve
        fractions = {"val": val, "test": test}
        parts = carve_groups([c.topic for c in train], fractions, seed, weights=[len(c.qas) for c in train])
        carved = {split: [train[i] for i in parts[split]] for split in SPLITS}
        note = (
            f"dev and test carved out of {Path(self.path) / 'train.jsonl'} by topic (val {val}, "
            f"test {test} of its questions, seed {seed}); not the released val/test"
        )
        return carved, {
            "splits": "carved",
            "note": note,
            "topics": {s: sorted({c.topic for c in carved[s]}) for s in SPLITS},
        }

    def describe_split(self, split: str) -> str:
        """A split's name as prediction tables show it."""
        return split if self.mode == "released" else f"{split} (carved from train)"
