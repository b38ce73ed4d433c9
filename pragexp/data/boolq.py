"""BoolQ (Clark et al., 2019): a yes/no question about a Wikipedia passage -> yes or no.

The source task of the Circa paper's BERT-BOOLQ-YN transfer row. Reads, as released:

- BoolQ `{train,dev}.jsonl` (fields `question`, `passage`, `answer` true/false, `title`; the title
  is not read). The released `test.jsonl` has no answers: it cannot be scored, so the error for
  its missing `answer` says to test on `dev.jsonl`;
- SuperGLUE's BoolQ jsonl (`question`, `passage`, `label` true/false, `idx`) and TSV files with
  the same column names;
- the hub copy (`google/boolq`: `question`, `passage`, `answer` bool; splits train and validation).

A null or empty answer counts as no gold label (skipped and counted); any other value that is
not true/false (or yes/no, 1/0) stops the read naming the file, line and field.
Input: "[CLS] question [SEP] passage [SEP]", the order of the BoolQ paper's BERT baseline.
"""

from __future__ import annotations

from pragexp.data.common.datamodules.pair_classification import PairClassificationDataModule
from pragexp.data.common.files.pair_readers import PairSchema
from pragexp.runs.sampling_unit import SamplingUnit

LABELS = ("no", "yes")  # class index = int(answer)
_VALUES = {"false": 0, "no": 0, "0": 0, "true": 1, "yes": 1, "1": 1}


def parse_boolq_answer(value: object) -> int | None:
    """0 (no) or 1 (yes) from a JSON bool, 0/1, or their spellings; None when there is no answer."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in _VALUES:
            return _VALUES[text]
    raise ValueError(f"unknown label {value!r}; expected true or false")


BOOLQ_SCHEMA = PairSchema(
    name="BoolQ",
    first=("question",),
    second=("passage",),
    label=("answer", "label"),
    parse_label=parse_boolq_answer,
    prompt_names=("question", "passage"),
    missing_label_hint=(
        "BoolQ's test.jsonl is released without answers: test on dev.jsonl (data.test_path=dev.jsonl)"
    ),
)


class BoolQDataModule(PairClassificationDataModule):
    """Question/passage pairs, 2 classes; options in pragexp.data.common.datamodules.pair_classification and
    conf/data/boolq.yaml."""

    schema = BOOLQ_SCHEMA
    default_label_names = LABELS
    default_label_slugs = LABELS
    default_hub_name = "google/boolq"
    # the hub has no test split: validation is the test set, and dev is carved out of train
    default_hub_splits = {"train": "train", "val": None, "test": "validation"}
    file_hint = "train.jsonl"
    sampling_unit = SamplingUnit(
        "passage",
        "several questions are paired with one Wikipedia passage, whose content their answers share",
    )
    unit_text = "second"
    dataset = "boolq"
    release_files = {"train": ("train.jsonl",), "test": ("dev.jsonl",)}
