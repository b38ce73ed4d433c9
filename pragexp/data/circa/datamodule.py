"""Circa as a text-pair classification data module (Louis, Roth and Radlinski, EMNLP 2020).

- Splits: `matched` = a random 60/20/20 split of the kept rows seeded by `split_seed` (train =
  floor(0.6 n), dev = test = half the rest, as in the paper); `unmatched` = leave one scenario out:
  `fold` k (0..9) tests on the k-th context in alphabetical order and splits the other nine into
  train and dev (`unmatched_dev_fraction` of them for dev).
- Inputs: `qa` = "[CLS] question [SEP] answer [SEP]"; `question` or `answer` alone (the paper's
  question-only and answer-only baselines).
- Reading, labels and what is skipped or kept: pragexp.data.circa.io.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

from pragexp.data.circa.io import (
    LABEL_COLUMNS,
    LABEL_SLUGS,
    LABELS,
    read_circa_hub,
    read_circa_tsv,
    select_labelled,
)
from pragexp.data.common.datamodules.text_classification import TextClassificationDataModule
from pragexp.data.common.splits import SPLITS, leave_one_group_out, matched_split
from pragexp.runs.record import DataRecord
from pragexp.runs.sampling_unit import SamplingUnit
from pragexp.utils.errors import DataFormatError

log = logging.getLogger(__name__)


class CircaDataModule(TextClassificationDataModule):
    """Circa as a text-pair classification task; see the module docstring for the options, and
    pragexp.data.common.datamodules.text_classification for tokenization (`tokenizer`, `tokenizer_ckpt`) and
    checkpoints."""

    dataset = "circa"
    sampling_unit = SamplingUnit(
        "question", "each question of a scenario was answered by about ten annotators, whose answers share it"
    )
    release_files = {"all": ("circa-data.tsv",)}
    declared_keys = ("setting", "input")

    @classmethod
    def declared(cls, settings: Mapping) -> DataRecord:
        """The label set, and the left-out scenario of the unmatched setting (the matched split has no
        fold)."""
        record = super().declared(settings)
        unmatched = settings.get("setting") == "unmatched"
        return replace(
            record, labels=settings.get("labels"), fold=int(settings.get("fold", 0)) if unmatched else None
        )

    def __init__(
        self,
        path: str | None = None,
        hub_name: str = "google-research-datasets/circa",
        labels: str = "relaxed",
        setting: str = "matched",
        fold: int = 0,
        split_seed: int = 0,
        unmatched_dev_fraction: float = 0.2,
        input: str = "qa",
        **common,  # TextClassificationDataModule's: tokenizer, tokenizer_ckpt, max_length, batch sizes, ...
    ):
        if labels not in LABELS:
            raise ValueError(
                f"data.labels must be 'relaxed' (4 classes) or 'strict' (6 classes), got {labels!r}"
            )
        if setting not in ("matched", "unmatched"):
            raise ValueError(f"data.setting must be 'matched' or 'unmatched', got {setting!r}")
        if input not in ("qa", "question", "answer"):
            raise ValueError(f"data.input must be 'qa', 'question' or 'answer', got {input!r}")
        super().__init__(
            label_names=LABELS[labels],
            label_slugs=[LABEL_SLUGS[n] for n in LABELS[labels]],
            **common,
        )
        self.path, self.hub_name, self.labels, self.setting = path, hub_name, labels, setting
        self.fold, self.split_seed, self.dev_fraction, self.input = (
            int(fold),
            int(split_seed),
            unmatched_dev_fraction,
            input,
        )

    # -- reading and splitting --------------------------------------------------------------
    def _read(self):
        if self.path:
            return read_circa_tsv(self.path)
        return read_circa_hub(self.hub_name)

    def _make_splits(self) -> None:
        rows, read = self._read()
        kept, dropped = select_labelled(rows, self.labels)
        source = read.source
        if not kept:
            raise DataFormatError(
                source,
                f"no row has a usable {self.labels} label "
                f"({LABEL_COLUMNS[self.labels]}); dropped: {dict(dropped)}",
            )
        if self.setting == "matched":
            idx, held_out = matched_split(len(kept), self.split_seed), None
        else:
            contexts = [row.context for row, _ in kept]
            idx, held_out = leave_one_group_out(
                contexts, self.fold, self.split_seed, self.dev_fraction, kind="scenarios"
            )
        self.splits = {s: [kept[i] for i in idx[s]] for s in SPLITS}
        self.report = {
            "source": source,
            "labels": self.labels,
            "setting": self.setting,
            "input": self.input,
            "fold": self.fold if self.setting == "unmatched" else None,
            "test_scenario": held_out,
            "rows_read": read.rows_read,
            "corrupt": len(read.corrupt),
            "corrupt_rows": [{"line": line, "reason": why} for line, why in read.corrupt[:50]],
            "odd_text": len(read.odd_text),
            "odd_text_rows": [{"line": line, "reason": why} for line, why in read.odd_text[:50]],
            "dropped": dict(sorted(dropped.items())),
            "kept": len(kept),
            **self.split_summary(),
        }
        for line, why in read.corrupt[:10]:
            log.warning("%s:%s: skipped corrupt row: %s", source, line, why)
        log.info(
            "Circa %s/%s from %s: %d rows read, %d corrupt skipped, %d kept with odd text, dropped %s, "
            "kept %d -> train/dev/test %s",
            self.labels,
            self.setting,
            source,
            read.rows_read,
            len(read.corrupt),
            len(read.odd_text),
            dict(dropped),
            len(kept),
            "/".join(str(len(self.splits[s])) for s in SPLITS),
        )

    def _texts(self, split: str) -> tuple[list[str], list[str] | None]:
        rows = [row for row, _ in self.splits[split]]
        if self.input == "question":
            return [r.question for r in rows], None
        if self.input == "answer":
            return [r.answer for r in rows], None
        return [r.question for r in rows], [r.answer for r in rows]

    def _unit(self, row) -> tuple[str, str]:
        return row.context, " ".join(row.question.split())

    def _prompt_fields(self, row) -> dict[str, str]:
        # The scenario is the paper's "context" (e.g. "X wants to know about Y's food preferences.").
        return {"context": row.context, "question": row.question, "answer": row.answer}

    # -- checkpoint: the label setting travels with the tokenizer ---------------------------------
    def state_dict(self) -> dict:
        return {"labels": self.labels, **super().state_dict()}

    def check_state(self, state: dict) -> None:
        if state.get("labels", self.labels) != self.labels:
            raise ValueError(
                f"the checkpoint was trained with data.labels={state['labels']} "
                f"({len(state['label_names'])} classes); set data.labels={state['labels']}"
            )
        super().check_state(state)
