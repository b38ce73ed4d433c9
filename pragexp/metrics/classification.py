"""Single-label classification: accuracy, per-class and macro F1, and the confusion matrix.

`ClassificationMetric` keeps each example's dataset index, prediction and gold label, and after
gathering from all ranks counts every index once (Lightning's distributed sampler repeats examples
to even out the ranks), like `GroupedMeanMetric`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torchmetrics import Metric


def slugify(name: str) -> str:
    """A label name as a metric-key part: `Yes, subject to some conditions` -> `yes_subject_to_some_conditions`."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def confusion_matrix(preds: torch.Tensor, target: torch.Tensor, num_labels: int) -> torch.Tensor:
    """(num_labels, num_labels) counts; rows are gold labels, columns predictions."""
    flat = target.long().reshape(-1) * num_labels + preds.long().reshape(-1)
    return torch.bincount(flat, minlength=num_labels * num_labels).reshape(num_labels, num_labels)


def f1_per_class(confusion: torch.Tensor) -> torch.Tensor:
    """F1 of each class from a confusion matrix; 0 for a class never predicted nor present."""
    confusion = confusion.double()
    tp = confusion.diagonal()
    predicted, gold = confusion.sum(0), confusion.sum(1)
    denom = predicted + gold
    return torch.where(denom > 0, 2 * tp / denom.clamp(min=1), torch.zeros_like(tp)).float()


class ClassificationMetric(Metric):
    """`update(index, preds, target)`; `compute()` -> {acc, macro_f1, f1/<slug>..., count};
    `confusion()` -> the confusion matrix over the same (deduplicated) examples."""

    full_state_update = False

    def __init__(self, label_slugs: Sequence[str], **kwargs):
        super().__init__(**kwargs)
        self.label_slugs = list(label_slugs)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("targets", default=[], dist_reduce_fx="cat")

    def update(self, index: torch.Tensor, preds: torch.Tensor, target: torch.Tensor) -> None:
        self.indices.append(index.long().reshape(-1))
        self.preds.append(preds.long().reshape(-1))
        self.targets.append(target.long().reshape(-1))

    def _unique(self) -> tuple[torch.Tensor, torch.Tensor]:
        indices, preds, targets = (_cat(x) for x in (self.indices, self.preds, self.targets))
        if indices.numel() == 0:
            return preds, targets
        order = torch.argsort(indices, stable=True)
        indices, preds, targets = indices[order], preds[order], targets[order]
        first = torch.ones_like(indices, dtype=torch.bool)
        first[1:] = indices[1:] != indices[:-1]
        return preds[first], targets[first]

    def confusion(self) -> torch.Tensor:
        preds, targets = self._unique()
        return confusion_matrix(preds, targets, len(self.label_slugs))

    def compute(self) -> dict[str, torch.Tensor]:
        preds, targets = self._unique()
        if targets.numel() == 0:
            return {}
        f1 = f1_per_class(confusion_matrix(preds, targets, len(self.label_slugs)))
        out = {"acc": (preds == targets).float().mean(), "macro_f1": f1.mean()}
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


def _cat(x):
    if isinstance(x, torch.Tensor):  # after a DDP sync the list is already one tensor
        return x
    return torch.cat(x) if x else torch.empty(0, dtype=torch.long)
