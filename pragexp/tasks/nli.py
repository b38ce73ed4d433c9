"""Natural language inference (MNLI): premise and hypothesis -> entailment, neutral or contradiction.
The Circa paper's BERT-MNLI-YN starts from an encoder fine-tuned on it; accuracy, per-class F1."""

from __future__ import annotations

from pragexp.tasks.classification import ClassificationTask


class NLITask(ClassificationTask):
    """ "[CLS] premise [SEP] hypothesis [SEP]" -> one of 3 labels (pragexp.data.nli)."""
