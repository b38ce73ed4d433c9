"""What every text(-pair) classification data module shares: the tokenizer, encoding, batches,
label counts, the data report and the state that travels in checkpoints.

Used by Circa and by the transfer sources (NLI, BoolQ), whose encoders Circa starts from. A
subclass reads its data into `self.splits[split] = [(row, label index), ...]` and `self.report`
in `_make_splits()`, and says which text (or pair of texts) a row gives in `_texts(split)`.

With `prompts` (the model reads prompts: `model=llm`), examples carry a `PromptItem` of the row's texts
(`_prompt_fields`) instead of token ids, and no tokenizer is built.

The data module owns tokenization: `tokenizer` names the encoder's tokenizer (`model.pretrained`:
a hub name, `minilm`, or `tiny`, trained here on the training texts) or is null when the model
reads no text (majority baseline). `tokenizer_ckpt` (`model.init_ckpt`) takes the tokenizer from
another pragexp checkpoint instead, so a transferred encoder keeps its vocabulary. The tokenizer
travels in `state_dict`, so a checkpoint evaluates with the exact ids it was trained on.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Sequence

from pragexp.data.common.datamodules.base import SplitsDataModule
from pragexp.data.common.prompt_examples import prompt_collate, prompt_example
from pragexp.data.common.splits import SPLITS
from pragexp.data.common.tokens import tokenization as tt
from pragexp.data.common.units import unit_ids
from pragexp.prompting import PromptItem
from pragexp.runs import checkpoint


def tokenizer_from_checkpoint(ckpt: str) -> tt.Tokenizer:
    """The tokenizer kept in any pragexp checkpoint's data module state (a model=bert run)."""
    text = checkpoint.read(ckpt, setting="model.init_ckpt").tokenizer_json()
    if text is None:
        raise ValueError(
            f"model.init_ckpt={ckpt}: no tokenizer in the checkpoint's data module state "
            "(start from a model=bert checkpoint)"
        )
    return tt.Tokenizer.from_str(text)


class TextClassificationDataModule(SplitsDataModule):
    def __init__(
        self,
        label_names: Sequence[str],
        label_slugs: Sequence[str],
        tokenizer: str | None = None,
        tokenizer_ckpt: str | None = None,
        max_length: int = 128,
        tiny_vocab_size: int = 2000,
        prompts: bool = False,
        report_dir: str | None = None,
        limit: int | None = None,
        batch_size: int = 32,
        eval_batch_size: int = 256,
        num_workers: int = 0,
    ):
        super().__init__(batch_size, eval_batch_size, num_workers, report_dir, limit)
        self.label_names: tuple[str, ...] = tuple(label_names)
        self.label_slugs: tuple[str, ...] = tuple(label_slugs)
        self.tokenizer_name, self.tokenizer_ckpt = tokenizer, tokenizer_ckpt
        self.max_length, self.tiny_vocab_size = max_length, tiny_vocab_size
        self.prompts = bool(prompts)
        if self.prompts:
            self.tokenizer_name = self.tokenizer_ckpt = None  # an LLM reads the texts themselves
        self.tokenizer = None
        self.splits: dict[str, list[tuple[object, int]]] = {}
        self.report: dict = {}

    # -- what a subclass provides -------------------------------------------------------------
    def _make_splits(self) -> None:
        """Fill `self.splits` (some of train/val/test) and `self.report`."""
        raise NotImplementedError

    def _texts(self, split: str) -> tuple[list[str], list[str] | None]:
        """The first texts of a split's rows, and the second ones (None for single-text inputs)."""
        raise NotImplementedError

    def _prompt_fields(self, row) -> dict[str, str]:
        """The texts of a row as a prompt template's `{fields}`."""
        raise NotImplementedError

    def _unit(self, row) -> Hashable:
        """What names the row's sampling unit (`sampling_unit`): rows with equal keys are one unit."""
        raise NotImplementedError

    def _units(self, split: str) -> list[int]:
        return unit_ids(self._unit(row) for row, _ in self.splits[split])

    # -- prompts ----------------------------------------------------------------------------------
    def prompt_items(self, split: str) -> list[PromptItem]:
        """Every example of a split as an LLM reads it (options: the prompt template's label words)."""
        if not self.splits:
            self._make_splits()
        if split not in self.splits:
            raise ValueError(f"no {split} split: {self.missing_split_hint(split)}")
        return [
            PromptItem(i, self._prompt_fields(row), label=y) for i, (row, y) in enumerate(self.splits[split])
        ]

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def num_labels(self) -> int:
        return len(self.label_names)

    @property
    def vocab_size(self) -> int | None:
        return self.tokenizer.get_vocab_size() if self.tokenizer is not None else None

    def label_counts(self, split: str) -> list[int]:
        counts = Counter(label for _, label in self.splits[split])
        return [counts[i] for i in range(self.num_labels)]

    def split_summary(self) -> dict:
        """Split sizes and label counts per split (by label name), for the data report."""
        present = [s for s in SPLITS if s in self.splits]
        return {
            "split_sizes": {s: len(self.splits[s]) for s in present},
            "label_counts": {
                s: dict(zip(self.label_names, self.label_counts(s), strict=True)) for s in present
            },
        }

    # -- tokenizer ------------------------------------------------------------------------------
    def _ensure_tokenizer(self) -> None:
        if self.tokenizer is not None or self.tokenizer_name is None:
            return
        if self.tokenizer_ckpt:
            tokenizer = tokenizer_from_checkpoint(self.tokenizer_ckpt)
        else:
            if "train" not in self.splits:
                raise ValueError(
                    f"model.pretrained={self.tokenizer_name} trains its tokenizer on the training split, "
                    "and there is none: set the training data, or evaluate a checkpoint (ckpt_path=...)"
                )
            firsts, seconds = self._texts("train")
            tokenizer = tt.build_tokenizer(
                self.tokenizer_name, [*firsts, *(seconds or [])], self.tiny_vocab_size
            )
        self.tokenizer = tt.configure(tokenizer, self.max_length)

    def _examples(self, split: str) -> list[dict]:
        """Text examples; the collate function encodes each batch with the tokenizer."""
        labels, units = [label for _, label in self.splits[split]], self._units(split)
        if self.prompts:
            items = self.prompt_items(split)
            return [prompt_example(item, item.label, unit) for item, unit in zip(items, units, strict=True)]
        if self.tokenizer is None:
            return [
                {"label": y, "index": i, "cluster": u}
                for i, (y, u) in enumerate(zip(labels, units, strict=True))
            ]
        firsts, seconds = self._texts(split)
        examples = [
            {"text": a, "label": y, "index": i, "cluster": u}
            for i, (a, y, u) in enumerate(zip(firsts, labels, units, strict=True))
        ]
        for example, b in zip(examples, seconds or (), strict=False):
            example["text_pair"] = b
        return examples

    def describe(self, split: str, index: int) -> dict:
        """The row behind an example, for prediction tables."""
        row, _ = self.splits[split][index]
        return dataclasses.asdict(row) if dataclasses.is_dataclass(row) else {}

    def setup(self, stage: str | None = None) -> None:
        if not self.splits:
            self._make_splits()
            self.write_report(self.report)
        self._ensure_tokenizer()
        for split in self.splits:
            if split not in self.datasets:
                self.datasets[split] = self._examples(split)

    # -- loaders --------------------------------------------------------------------------------
    def collate_fn(self):
        return prompt_collate if self.prompts else tt.PadCollate(self.tokenizer)

    # -- checkpoint: the tokenizer and the label set travel with the weights ------------------
    def state_dict(self) -> dict:
        state = {"label_names": list(self.label_names)}
        if self.tokenizer is not None:
            state["tokenizer"] = self.tokenizer.to_str()
        return state

    def check_state(self, state: dict) -> None:
        """Refuse a checkpoint trained on another label set (its head would mean other classes)."""
        names = state.get("label_names")
        if names is not None and list(names) != list(self.label_names):
            raise ValueError(
                f"the checkpoint was trained on the labels {names}, this data has {list(self.label_names)}"
            )

    def load_state_dict(self, state: dict) -> None:
        if not state:
            return
        self.check_state(state)
        if state.get("tokenizer"):
            had_text = self.tokenizer is not None
            self.tokenizer = tt.configure(tt.Tokenizer.from_str(state["tokenizer"]), self.max_length)
            if not had_text:
                self.datasets = {}  # examples need their text now: rebuilt in the next setup()
                if self.splits:
                    self.setup()
