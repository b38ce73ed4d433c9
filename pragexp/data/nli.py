"""MNLI-style natural language inference: premise and hypothesis -> entailment, neutral, contradiction.

The source task of the Circa paper's BERT-MNLI-YN transfer row. Reads, as released:

- MultiNLI 1.0 `multinli_1.0_{train,dev_matched,dev_mismatched}.jsonl` (fields `sentence1`,
  `sentence2`, `gold_label`; `-` = the annotators did not agree: no gold label) and the `.txt`
  TSV twins; GLUE's `MNLI/{train,dev_matched}.tsv` (same column names; GLUE already dropped the
  `-` rows, and its test TSV has no labels);
- the hub copy (`nyu-mll/multi_nli`: `premise`, `hypothesis`, `label` 0/1/2 = entailment, neutral,
  contradiction, -1 = no label).

Rows without a gold label are skipped and counted; an unknown label stops the read (file, line, field).
Input: "[CLS] premise [SEP] hypothesis [SEP]".
"""

from __future__ import annotations

from pragexp.data.common.datamodules.pair_classification import PairClassificationDataModule
from pragexp.data.common.files.pair_readers import PairSchema
from pragexp.runs.sampling_unit import SamplingUnit

LABELS = ("entailment", "neutral", "contradiction")  # in the hub's class-id order
NO_GOLD = ("-", "", "-1")


def parse_nli_label(value: object) -> int | None:
    """A class index from a label name or a hub class id; None when the row has no gold label."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if value == -1:
            return None
        if 0 <= value < len(LABELS):
            return value
    elif isinstance(value, str):
        text = value.strip().lower()
        if text in NO_GOLD:
            return None
        if text in LABELS:
            return LABELS.index(text)
        if text in ("0", "1", "2"):
            return int(text)
    raise ValueError(
        f"unknown label {value!r}; expected one of {', '.join(LABELS)} (or 0/1/2), or '-' for no gold label"
    )


NLI_SCHEMA = PairSchema(
    name="NLI",
    first=("sentence1", "premise"),
    second=("sentence2", "hypothesis"),
    label=("gold_label", "label"),
    parse_label=parse_nli_label,
    prompt_names=("premise", "hypothesis"),
    missing_label_hint="test files released without labels (GLUE's test_matched.tsv) cannot be scored",
)


class NLIDataModule(PairClassificationDataModule):
    """Premise/hypothesis pairs, 3 classes; options in pragexp.data.common.datamodules.pair_classification and
    conf/data/nli.yaml."""

    schema = NLI_SCHEMA
    default_label_names = LABELS
    default_label_slugs = LABELS
    default_hub_name = "nyu-mll/multi_nli"
    # the matched validation set (public labels) is the test set; dev is carved out of train
    default_hub_splits = {"train": "train", "val": None, "test": "validation_matched"}
    file_hint = "multinli_1.0_train.jsonl"
    sampling_unit = SamplingUnit(
        "premise",
        "MultiNLI's writers wrote three hypotheses (one per label) for each premise they were shown",
    )
    unit_text = "first"
    dataset = "nli"
    release_files = {  # MultiNLI's files (.jsonl or .txt) and GLUE's MNLI copy
        "train": ("multinli_1.0_train.jsonl", "multinli_1.0_train.txt", "train.tsv"),
        "val": ("multinli_1.0_dev_mismatched.jsonl", "multinli_1.0_dev_mismatched.txt"),
        "test": ("multinli_1.0_dev_matched.jsonl", "multinli_1.0_dev_matched.txt", "dev_matched.tsv"),
    }
