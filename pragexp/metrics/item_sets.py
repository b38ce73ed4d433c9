"""Figures of sets of examples that a benchmark's data module declares by dataset index, where an example's
worth depends on the others of its set: exact under DDP (see `examples`).

- **Joint accuracy** (`joint_sets`: name -> sets of examples): a set counts as right when every example of it
  is right; `joint_acc/<name>` is the share of the name's sets that are. Hi-ToM's "joint accuracy" (He et al.
  2023) is such a set per story and order k: the story's questions of orders 0..k; BigToM's
  true-and-false-belief pairs are another. A set with an example that was not scored (a limited test run) is
  left out. The standard error and interval are clustered by the set's sampling unit (its story; a set across
  units is refused): `joint_acc_stderr/<name>`, ... (`pragexp.metrics.uncertainty`).
- **Macro-F1 of a group's answers** (`f1_sets`: name -> batches of examples): each example's gold option and
  chosen option (-1: none) are a class label each, the option positions being the classes (a benchmark lists a
  genre's labels in one order). The F1 is the one OpenToM's authors compute (their `src/evaluate.py`, `main`):
  scikit-learn's macro F1 over the examples that were answered (a reply naming no option, their "corrupted"
  generation, is left out, and counted: `unparsed/<name>`), over the classes that occur among their gold and
  chosen labels (a class neither gold nor chosen is no class). pragexp computes it with `ClassificationMetric`
  over those examples and classes: `macro_f1/<name>` over every batch's examples together and, with several
  batches (OpenToM's five batches of 50 stories), `macro_f1_batch_mean/<name>` and `macro_f1_batch_sd/<name>`,
  the mean and population standard deviation over the batches (numpy's `std`, as theirs), and
  `macro_f1_batches/<name>` their number. The interval of `macro_f1/<name>` is the classification metric's
  cluster bootstrap over the examples' sampling units; `unparsed/<name>` has its clustered interval too. Any
  figure `ClassificationMetric` gives beside `macro_f1` (`macro_f1_<figure>`) is passed on per name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from torchmetrics import Metric

from pragexp.batches.types import LabelledRows, PromptBatch
from pragexp.metrics.choice_figures import ChoiceScores
from pragexp.metrics.classification import ClassificationMetric
from pragexp.metrics.uncertainty import with_uncertainty
from pragexp.utils.per_example import first_per_index, gathered

Sets = Mapping[str, Sequence[Sequence[int]]]


class ItemSetMetric(Metric):
    full_state_update = False

    def __init__(self, joint_sets: Sets | None = None, f1_sets: Sets | None = None, **kwargs):
        super().__init__(**kwargs)
        self.joint_sets = {name: [list(s) for s in sets] for name, sets in (joint_sets or {}).items()}
        self.f1_sets = {name: [list(b) for b in batches] for name, batches in (f1_sets or {}).items()}
        for name in ("indices", "correct", "predicted", "labels", "clusters"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, batch: PromptBatch, scores: ChoiceScores) -> None:
        """The batch's examples (dataset index, gold option, sampling unit: a set's examples share theirs),
        whether each is right and the option chosen (-1: none)."""
        index = batch["index"].long().reshape(-1)
        self.indices.append(index)
        self.correct.append(scores.correct.float().reshape(-1).to(index.device))
        self.predicted.append(scores.predicted.long().reshape(-1).to(index.device))
        self.labels.append(batch["label"].long().reshape(-1))
        self.clusters.append(batch["cluster"].long().reshape(-1))

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        columns = (gathered(self.correct), gathered(self.predicted, torch.long))
        columns += (gathered(self.labels, torch.long), gathered(self.clusters, torch.long))
        indices, correct, predicted, labels, clusters = first_per_index(indices, *columns)
        row = {int(i): r for r, i in enumerate(indices.tolist())}
        out: dict[str, torch.Tensor] = {}
        for name, sets in self.joint_sets.items():
            out.update(_joint(name, sets, row, correct, clusters))
        for name, batches in self.f1_sets.items():
            out.update(_group_f1(name, batches, row, predicted, labels, clusters))
        return out


def _joint(name: str, sets, row: dict, correct, clusters) -> dict[str, torch.Tensor]:
    scored = [[row[i] for i in s] for s in sets if s and all(i in row for i in s)]
    if not scored:
        return {}
    values = torch.tensor([float(all(correct[r] > 0.5 for r in s)) for s in scored], dtype=torch.float64)
    split = next((s for s in scored if len({int(clusters[r]) for r in s}) > 1), None)
    if split is not None:  # a set is one draw: its examples must be one unit's
        raise ValueError(f"a joint set of {name!r} holds examples of different sampling units: {split}")
    units = torch.stack([clusters[s[0]] for s in scored])
    figures = with_uncertainty("joint_acc", values, units, torch.zeros(len(scored), dtype=torch.long), [name])
    out = {k: v for k, v in figures.items() if k.endswith(f"/{name}")}
    out[f"joint_acc/{name}"] = values.mean().float()
    return out


def _group_f1(name: str, batches, row: dict, predicted, labels, clusters) -> dict[str, torch.Tensor]:
    rows = [[row[i] for i in batch if i in row] for batch in batches]
    rows = [r for r in rows if r]
    every = sorted({r for batch in rows for r in batch})
    if not every:
        return {}
    whole = authors_macro_f1(predicted[every], labels[every], clusters[every])
    out = {f"{key}/{name}": value for key, value in whole.items()}
    unparsed = (predicted[every] < 0).double()
    out[f"unparsed/{name}"] = unparsed.mean().float()
    figures = with_uncertainty(
        "unparsed", unparsed, clusters[every], torch.zeros(len(every), dtype=torch.long), [name]
    )
    out.update({k: v for k, v in figures.items() if k.endswith(f"/{name}")})
    if len(rows) > 1:
        per_batch = [authors_macro_f1(predicted[r], labels[r], clusters[r]).get("macro_f1") for r in rows]
        found = np.array([float(f) for f in per_batch if f is not None])
        if found.size:
            out[f"macro_f1_batch_mean/{name}"] = torch.tensor(found.mean())
            out[f"macro_f1_batch_sd/{name}"] = torch.tensor(found.std())
            out[f"macro_f1_batches/{name}"] = torch.tensor(float(found.size))
    return out


def authors_macro_f1(
    predicted: torch.Tensor, labels: torch.Tensor, clusters: torch.Tensor
) -> dict[str, torch.Tensor]:
    """scikit-learn's `f1_score(gold, chosen, average="macro")` over the answered examples (chosen >= 0) and
    the classes among their gold and chosen labels, as `macro_f1` (and the classification metric's
    `macro_f1_*` figures: its interval a bootstrap over the examples' sampling units, `clusters`); {} when
    none was answered."""
    answered = predicted >= 0
    gold, chosen, units = labels[answered], predicted[answered], clusters[answered]
    if gold.numel() == 0:
        return {}
    classes = sorted(set(gold.tolist()) | set(chosen.tolist()))
    code = {c: k for k, c in enumerate(classes)}
    metric = ClassificationMetric([str(c) for c in classes], sync_on_compute=False)
    labels = torch.tensor([code[c] for c in gold.tolist()])
    rows = LabelledRows(
        index=torch.arange(gold.numel()), cluster=units, group=torch.full_like(labels, -1), label=labels
    )
    metric.update(rows, torch.tensor([code[c] for c in chosen.tolist()]))
    return {k: v for k, v in metric.compute().items() if k == "macro_f1" or k.startswith("macro_f1_")}
