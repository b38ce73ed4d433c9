"""LUDWIG (Ruis et al. 2023) as an evaluation-only data module for an LLM (task=ludwig).

Every test pair is an example; its `PromptItem` holds the utterance and the response (the templates of
conf/prompt/ludwig.yaml fill them), the options "yes" and "no" in an order drawn per pair (seeded: it decides
which sentence is A in the contrastive setting, prompt=ludwig_contrastive) and the true one. With `shots` = k
> 0, each test pair brings k dev pairs as its demonstrations, drawn as the authors' code draws them
(`numpy.random.default_rng(seed)`, k without replacement per test pair, in the file's order: the draw of the
pair's `row`, the same pairs as theirs), so the prompt group says `demonstrations: per_item`. The pairs are
those the authors' label rule keeps (all 600 of the release: `io`). The groups are the implicature types
(`types_file`), by default as the authors' error analysis looks them up (`types: authors`: by utterance, a
pair found under none is "Other", Hyperbole pairs count overall but in no group, as the paper shows none), or
`types: matched`, pragexp's stricter matching by utterance and response (every label finds the pair it was
written for; the pairs no label names belong to no group). `data_report.json` says what was read, trimmed,
skipped and typed.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pragexp.data.common.datamodules.declaration import file_names, scalars, source
from pragexp.data.common.prompt_examples import PromptDataModule
from pragexp.data.ludwig.io import (
    DEV_FILE,
    OTHER,
    TEST_FILE,
    ImplicaturePair,
    authors_types,
    match_types,
    read_pairs,
    read_type_labels,
)
from pragexp.prompting import PromptItem
from pragexp.runs.record import DataRecord
from pragexp.runs.sampling_unit import SamplingUnit

log = logging.getLogger(__name__)
LABELS = ("yes", "no")
# The type labels' implicature types, in the order the release's analysis lists them; others follow, sorted.
TYPES = (
    "Particularised",
    "Generalised",
    "Idiom",
    "World knowledge",
    "Rhetorical question",
    "Hyperbole",
    OTHER,
)
HIDDEN_BY_AUTHORS = ("Hyperbole",)  # counted in the mean, shown in no per-type figure of the paper
TYPE_LOOKUPS = ("authors", "matched")


class LudwigDataModule(PromptDataModule):
    sampling_unit = SamplingUnit(
        "pair",
        "each test row is its own utterance-response pair, written apart from the others; one row per pair",
    )
    dataset = "ludwig"
    release_files = {"test": (TEST_FILE,), "val": (DEV_FILE,)}
    declared_keys = ("shots", "as_authors_read")

    @classmethod
    def declared(cls, settings: Mapping) -> DataRecord:
        """The test file and the demonstrations' pool (dev) in the repository's data folder."""
        files = {
            s: file_names(settings.get(k, d))
            for s, k, d in (("test", "test_file", TEST_FILE), ("val", "dev_file", DEV_FILE))
        }
        return DataRecord(
            cls.dataset, source(files, cls.release_files), files, setting=scalars(settings, cls.declared_keys)
        )

    def __init__(
        self,
        path: str | None = None,
        test_file: str = TEST_FILE,
        dev_file: str = DEV_FILE,
        types_file: str | None = "type_labels.csv",
        as_authors_read: bool = False,
        types: str = "authors",
        shots: int = 0,
        seed: int = 0,
        limit: int | None = None,
        report_dir: str | None = None,
        eval_batch_size: int = 16,
        num_workers: int = 0,
    ):
        super().__init__(eval_batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.path, self.test_file, self.dev_file, self.types_file = path, test_file, dev_file, types_file
        self.as_authors_read, self.shots, self.seed = bool(as_authors_read), int(shots), int(seed)
        if types not in TYPE_LOOKUPS:
            raise ValueError(f"data.types={types!r}: choose one of {', '.join(TYPE_LOOKUPS)}")
        self.types = types
        self.pairs: list[ImplicaturePair] = []
        self.group_names: tuple[str, ...] = ()

    def setup(self, stage: str | None = None) -> None:
        if self.pairs:
            return
        if not self.path:
            raise ValueError(
                "data.path is not set: pass data.path=/path/to/do-pigs-fly/data (the data/ folder of "
                "github.com/LauraRuis/do-pigs-fly)"
            )
        folder = Path(self.path)
        test, test_report = read_pairs(folder / self.test_file, self.as_authors_read)
        dev, dev_report = read_pairs(folder / self.dev_file, self.as_authors_read)
        if self.shots > len(dev):
            raise ValueError(f"prompt.shots={self.shots}, but {folder / self.dev_file} has {len(dev)} pairs")
        types = self._types(test, folder)
        found = set(types.values())
        self.group_names = tuple(t for t in TYPES if t in found) + tuple(sorted(found - {*TYPES}))
        self.pairs = test
        draws = _authors_draws(test_report.authors_rows, dev_report.authors_rows, self.shots, self.seed)
        demos = _demonstrations(test, dev, draws, folder / self.dev_file)
        self.datasets["test"] = [
            self._example(i, pair, types.get(i), demos[i]) for i, pair in enumerate(test)
        ]
        # prompt_items("train"): the dev pairs, the pool of shared demonstrations
        # (prompt.demonstrations=shared)
        self.datasets["train"] = [self._example(-1 - j, p, None, []) for j, p in enumerate(dev)]
        report = {"test": test_report.summary(), "dev": dev_report.summary(), "typed": len(types)}
        report["per_type"] = {t: sum(v == t for v in types.values()) for t in self.group_names}
        self.write_report(report)
        log.info("LUDWIG: %d test pairs (%d typed), %d dev pairs", len(test), len(types), len(dev))

    def _types(self, test: list[ImplicaturePair], folder: Path) -> dict[int, str]:
        if not self.types_file or not (folder / self.types_file).is_file():
            log.warning("no type labels (%s): no per-type accuracy", folder / (self.types_file or "?"))
            return {}
        labels, _ = read_type_labels(folder / self.types_file)
        if self.types == "matched":
            typed, _ = match_types(test, labels)
            return {i: label.type for i, label in typed.items()}
        return {i: t for i, t in authors_types(test, labels).items() if t not in HIDDEN_BY_AUTHORS}

    def _example(self, index: int, pair: ImplicaturePair, type_: str | None, demos: list) -> dict:
        item = self._prompt_item(index, pair, demos)
        group = self.group_names.index(type_) if type_ else -1
        return {
            "index": index,
            "group": group,
            "view": -1,
            "label": item.label,
            "item": item,
            "cluster": index,
        }

    def _prompt_item(self, index: int, pair: ImplicaturePair, demos=()) -> PromptItem:
        """The pair with "yes" and "no" in an order drawn for it alone (the contrastive setting's A and B)."""
        options = list(LABELS)
        random.Random(f"{self.seed}/{pair.utterance}/{pair.response}").shuffle(options)
        fields = {"utterance": pair.utterance, "response": pair.response}
        shown = tuple(self._prompt_item(-1, d) for d in demos)
        return PromptItem(index, fields, tuple(options), options.index(pair.label), demonstrations=shown)

    def describe(self, split: str, index: int) -> dict:
        pair = self.pairs[index]
        return {"utterance": pair.utterance, "response": pair.response, "implicature": pair.implicature}


def _authors_draws(tests: int, devs: int, shots: int, seed: int) -> list[list[int]]:
    """Per test row the authors keep, in the file's order, the rows of the dev pairs its k-shot prompt shows:
    as the authors' dataset class draws them (one generator for the whole file: row i's draw is the i-th of
    the stream)."""
    if shots == 0:
        return [[] for _ in range(tests)]
    rng = np.random.default_rng(seed)
    return [[int(j) for j in rng.choice(range(devs), shots, replace=False)] for _ in range(tests)]


def _demonstrations(
    test: list[ImplicaturePair], dev: list[ImplicaturePair], draws: list[list[int]], dev_path: Path
) -> list[list[ImplicaturePair]]:
    """Per test pair the dev pairs of its row's draw (rows counted among the pairs the authors' code keeps, of
    which pragexp skips any with an empty field: the draws stay theirs); a drawn dev pair that pragexp skipped
    is an error naming it."""
    by_row = {pair.row: pair for pair in dev}
    missing = sorted({j for pair in test for j in draws[pair.row]} - by_row.keys())
    if missing:
        raise ValueError(
            f"{dev_path}: the authors' draw shows the dev pair(s) of row {missing} (counted from 0 among the "
            "pairs their code keeps), which have an empty field and are skipped here (data_report.json)"
        )
    return [[by_row[j] for j in draws[pair.row]] for pair in test]
