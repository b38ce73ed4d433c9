"""Single-label classification: accuracy, per-class and macro F1, and the confusion matrix.

`ClassificationMetric` keeps each example's dataset index, prediction and gold label, and after
gathering from all ranks counts every index once (see `examples`); the scores themselves are
torchmetrics' functional ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torchmetrics import Metric
from torchmetrics.functional.classification import multiclass_confusion_matrix, multiclass_f1_score

from pragexp.utils.per_example import first_per_index, gathered


def slugify(name: str) -> str:
    """A label name as a metric-key part: `Yes, subject to some conditions` -> `yes_subject_to_some_conditions`."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class ClassificationMetric(Metric):
    """`update(index, preds, target)`; `compute()` -> {acc, macro_f1, f1/<slug>..., count};
    `confusion()` -> the confusion matrix over the same (deduplicated) examples.

    A prediction of -1 is no answer (an LLM's reply that names no label): wrong for accuracy, a false
    negative of its gold class for F1 (scored as an extra class that no gold label has), left out of the
    confusion matrix; with `no_answer=True`, `compute()` adds their share as `no_answer`."""

    full_state_update = False

    def __init__(self, label_slugs: Sequence[str], no_answer: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.label_slugs = list(label_slugs)
        self.report_no_answer = bool(no_answer)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("targets", default=[], dist_reduce_fx="cat")

    def update(self, index: torch.Tensor, preds: torch.Tensor, target: torch.Tensor) -> None:
        self.indices.append(index.long().reshape(-1))
        self.preds.append(preds.long().reshape(-1))
        self.targets.append(target.long().reshape(-1))

    def _unique(self) -> tuple[torch.Tensor, torch.Tensor]:
        _, preds, targets = first_per_index(
            *(gathered(x, torch.long) for x in (self.indices, self.preds, self.targets))
        )
        return preds, targets

    def confusion(self) -> torch.Tensor:
        """(labels, labels) counts; rows are gold labels, columns predictions."""
        preds, targets = self._unique()
        answered = preds >= 0
        return multiclass_confusion_matrix(
            preds[answered], targets[answered], num_classes=len(self.label_slugs)
        )

    def compute(self) -> dict[str, torch.Tensor]:
        preds, targets = self._unique()
        if targets.numel() == 0:
            return {}
        # A class never predicted nor present scores F1 = 0, and counts in the macro average.
        n = len(self.label_slugs)
        f1 = multiclass_f1_score(
            torch.where(preds >= 0, preds, n), targets, num_classes=n + 1, average=None, zero_division=0
        )[:n]
        out = {"acc": (preds == targets).float().mean(), "macro_f1": f1.mean()}
        if self.report_no_answer:
            out["no_answer"] = (preds < 0).float().mean()
        out.update({f"f1/{slug}": f1[i] for i, slug in enumerate(self.label_slugs)})
        out["count"] = torch.tensor(float(targets.numel()))
        return out


def plot_confusion(confusion: torch.Tensor, label_names: Sequence[str], title: str = ""):
    """A matplotlib figure of the confusion matrix (counts, rows gold, columns predicted)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global figure state

    cm = confusion.cpu().numpy()
    size = 1.2 + 0.9 * len(label_names)
    fig = Figure(figsize=(size + 1.5, size))
    ax = fig.subplots()
    image = ax.imshow(cm, cmap="Blues")
    fig.colorbar(image, ax=ax)
    ticks = range(len(label_names))
    short = [n if len(n) <= 18 else n[:16] + "…" for n in label_names]
    ax.set_xticks(ticks, short, rotation=40, ha="right")
    ax.set_yticks(ticks, short)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    threshold = cm.max() / 2 if cm.size else 0
    for i in ticks:
        for j in ticks:
            ax.text(
                j,
                i,
                str(cm[i, j]),
                ha="center",
                va="center",
                color="white" if cm[i, j] > threshold else "black",
            )
    ax.set_title(title)
    fig.tight_layout()
    return fig
