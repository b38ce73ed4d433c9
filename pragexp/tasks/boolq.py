"""BoolQ: a yes/no question about a passage -> yes or no. The Circa paper's BERT-BOOLQ-YN starts
from an encoder fine-tuned on it; accuracy, per-class F1."""

from __future__ import annotations

from pragexp.tasks.classification import ClassificationTask


class BoolQTask(ClassificationTask):
    """ "[CLS] question [SEP] passage [SEP]" -> no / yes (pragexp.data.boolq)."""
