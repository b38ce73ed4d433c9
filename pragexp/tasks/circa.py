"""Circa (Louis, Roth and Radlinski, 2020): classify an indirect answer to a yes/no question into
4 (RELAXED) or 6 (STRICT) classes; accuracy, per-class F1, confusion matrix."""

from __future__ import annotations

from pragexp.tasks.classification import ClassificationTask


class CircaTask(ClassificationTask):
    """ "[CLS] question [SEP] answer [SEP]" (or question or answer alone, `data.input`) -> label."""
