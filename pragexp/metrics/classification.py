"""Single-label classification: accuracy, per-class and macro F1, and the confusion matrix, each with its
uncertainty over the sampling units.

`ClassificationMetric` keeps each example's dataset index, prediction, gold label and unit (`cluster`), and
after gathering from all ranks counts every index once (see `examples`); the scores themselves are
torchmetrics' functional ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch
from torchmetrics import Metric
from torchmetrics.functional.classification import multiclass_confusion_matrix, multiclass_f1_score

from pragexp.batches.types import LabelledRows
from pragexp.metrics.bootstrap import bootstrap_f1
from pragexp.metrics.grouped import grouped_means
from pragexp.metrics.uncertainty import with_uncertainty
from pragexp.reporting.results import figure_key
from pragexp.utils.per_example import first_per_index, gathered


def slugify(name: str) -> str:
    """A label name as a metric-key part: `Yes, subject to some conditions` ->
    `yes_subject_to_some_conditions`."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


class ClassificationMetric(Metric):
    """`update(rows, preds)`: a batch (`pragexp.batches.types.LabelledRows`: the examples' dataset indices,
    gold labels and sampling units) and the predicted labels; `compute()` -> {acc, macro_f1, f1/<slug>...,
    count}; `confusion()` -> the confusion matrix over the same (deduplicated) examples. Every interval is
    over the sampling units (rows of one unit share it):

    - `acc` (and `no_answer`), means over examples: their standard error and 95% interval clustered by unit
      (`acc_stderr`, `acc_ci95_low`, `acc_ci95_high`, `acc_n`, `acc_rows`: `pragexp.metrics.uncertainty`);
    - `macro_f1` and each `f1/<slug>`, no means over examples: the standard error and BCa 95% interval of a
      cluster bootstrap, 2,000 resamples of the units drawn from `numpy.random.default_rng(0)` in the order of
      the units' ids (`pragexp.metrics.bootstrap`): `macro_f1_stderr`, `macro_f1_ci95_low`,
      `macro_f1_ci95_high`, `macro_f1_n`, `macro_f1_rows`, and `f1_stderr/<slug>`, `f1_ci95_low/<slug>`, ...
      (absent under two units);
    - `count` is a count: no interval;
    - each of `figures` (names of per-example scores that `update` takes, as an LLM's figures of
      `pragexp.metrics.choice_figures.CHOICE_FIGURES`), a mean over the examples that have one (NaN: none),
      overall (`<name>`) and per group of `group_names` (`<name>/<group>`), with the same clustered figures as
      `acc` (`pragexp.metrics.grouped.grouped_means`).

    A prediction of -1 is no answer (an LLM's reply that names no label): wrong for accuracy, a false
    negative of its gold class for F1 (scored as an extra class that no gold label has), left out of the
    confusion matrix; with `no_answer=True`, `compute()` adds their share as `no_answer`."""

    full_state_update = False

    def __init__(
        self,
        label_slugs: Sequence[str],
        no_answer: bool = False,
        figures: Sequence[str] = (),
        group_names: Sequence[str] = (),
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.label_slugs = list(label_slugs)
        self.report_no_answer = bool(no_answer)
        self.figure_names, self.group_names = list(figures), list(group_names)
        for name in ("indices", "preds", "targets", "clusters", "groups", "figures"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, rows: LabelledRows, preds: torch.Tensor, **figures: torch.Tensor) -> None:
        if sorted(figures) != sorted(self.figure_names):
            raise ValueError(f"expected figures {self.figure_names}, got {sorted(figures)}")
        index = rows["index"]
        self.indices.append(index.long().reshape(-1))
        self.preds.append(preds.long().reshape(-1))
        self.targets.append(rows["label"].long().reshape(-1))
        self.clusters.append(rows["cluster"].long().reshape(-1).to(index.device))
        self.groups.append(rows["group"].long().reshape(-1).to(index.device))
        columns = [figures[name].float().reshape(-1).to(index.device) for name in self.figure_names]
        self.figures.append(torch.stack(columns, 1) if columns else torch.empty(len(index), 0))

    def _unique(self) -> tuple[torch.Tensor, ...]:
        """(indices, preds, targets, clusters, groups, figures), each dataset index once, in index order."""
        states = (self.indices, self.preds, self.targets, self.clusters, self.groups)
        indices, *columns = (gathered(x, torch.long) for x in states)
        figures = gathered(self.figures).reshape(len(indices), len(self.figure_names))
        return first_per_index(indices, *columns, figures)

    def confusion(self) -> torch.Tensor:
        """(labels, labels) counts; rows are gold labels, columns predictions."""
        _, preds, targets, *_ = self._unique()
        answered = preds >= 0
        return multiclass_confusion_matrix(
            preds[answered], targets[answered], num_classes=len(self.label_slugs)
        )

    def compute(self) -> dict[str, torch.Tensor]:
        _, preds, targets, clusters, groups, figures = self._unique()
        if targets.numel() == 0:
            return {}
        # A class never predicted nor present scores F1 = 0, and counts in the macro average.
        n = len(self.label_slugs)
        answers = torch.where(preds >= 0, preds, n)
        f1 = multiclass_f1_score(answers, targets, num_classes=n + 1, average=None, zero_division=0)[:n]
        means = {"acc": (preds == targets).float()}
        if self.report_no_answer:
            means["no_answer"] = (preds < 0).float()
        out = {name: rows.mean() for name, rows in means.items()}
        out["macro_f1"] = f1.mean()
        for name, rows in means.items():
            out.update(with_uncertainty(name, rows, clusters, share=True))
        out.update({f"f1/{slug}": f1[i] for i, slug in enumerate(self.label_slugs)})
        out.update(self._f1_figures(answers, targets, clusters))
        for i, name in enumerate(self.figure_names):
            out.update(grouped_means(name, figures[:, i], groups, clusters, self.group_names))
        out["count"] = torch.tensor(float(targets.numel()))
        return out

    def _f1_figures(self, answers, targets, clusters) -> dict[str, torch.Tensor]:
        """The cluster bootstrap's figures of each class's F1 and of macro-F1 (see the class docstring)."""
        units, rows = len(torch.unique(clusters)), float(len(targets))
        found = bootstrap_f1(
            clusters.cpu().numpy(), answers.cpu().numpy(), targets.cpu().numpy(), len(self.label_slugs)
        )
        names = [("f1", slug) for slug in self.label_slugs] + [("macro_f1", None)]
        out = {}
        for k, (name, group) in enumerate(names):
            out[figure_key(name, "n", group)], out[figure_key(name, "rows", group)] = float(units), rows
            if found is not None:
                out[figure_key(name, "stderr", group)] = float(found.stderr[k])
                out[figure_key(name, "ci95_low", group)] = float(found.low[k])
                out[figure_key(name, "ci95_high", group)] = float(found.high[k])
        return {key: torch.tensor(value) for key, value in out.items()}


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
