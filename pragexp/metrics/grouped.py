"""Per-example scores averaged overall and per group, with their uncertainty (see `uncertainty`), exact under
DDP (see `examples`)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric

from pragexp.batches.types import Rows
from pragexp.metrics.uncertainty import with_uncertainty
from pragexp.utils.per_example import first_per_index, gathered


class GroupedMeanMetric(Metric):
    """Means of named per-example scores, overall (`name`) and per group (`name/group`), each with its
    standard error and 95% interval (`name_stderr`, ... : `pragexp.metrics.uncertainty`).

    `update(rows, **scores)` takes a batch (`pragexp.batches.types.Rows`: the examples' dataset indices, their
    group ids, an index into `group_names` or -1 for none, and their sampling units, by which every error is
    clustered) and one tensor per score name. An example whose score is NaN has none: it is left out of that
    score's means (a mean with no example left is not reported) and counts in `count`.
    """

    full_state_update = False

    def __init__(self, score_names: Sequence[str], group_names: Sequence[str] = (), **kwargs):
        super().__init__(**kwargs)
        self.score_names = list(score_names)
        self.group_names = list(group_names)
        self.add_state("indices", default=[], dist_reduce_fx="cat")
        self.add_state("groups", default=[], dist_reduce_fx="cat")
        self.add_state("clusters", default=[], dist_reduce_fx="cat")
        self.add_state("scores", default=[], dist_reduce_fx="cat")

    def update(self, rows: Rows, **scores: torch.Tensor) -> None:
        if sorted(scores) != sorted(self.score_names):
            raise ValueError(f"expected scores {self.score_names}, got {sorted(scores)}")
        self.indices.append(rows["index"].long().reshape(-1))
        self.groups.append(rows["group"].long().reshape(-1))
        self.clusters.append(rows["cluster"].long().reshape(-1))
        self.scores.append(torch.stack([scores[n].float().reshape(-1) for n in self.score_names], dim=1))

    def _unique_examples(self):
        indices = gathered(self.indices, torch.long)
        scores = gathered(self.scores).reshape(-1, len(self.score_names))
        columns = (gathered(self.groups, torch.long), gathered(self.clusters, torch.long))
        return first_per_index(indices, *columns, scores)

    def compute(self) -> dict[str, torch.Tensor]:
        _, groups, clusters, scores = self._unique_examples()
        out: dict[str, torch.Tensor] = {}
        if scores.shape[0] == 0:
            return out
        for i, name in enumerate(self.score_names):
            out.update(grouped_means(name, scores[:, i], groups, clusters, self.group_names))
        out["count"] = torch.tensor(float(scores.shape[0]))
        return out

    def example_count(self) -> int:
        return int(self._unique_examples()[0].numel())


def grouped_means(
    name: str, scores: torch.Tensor, groups: torch.Tensor, clusters: torch.Tensor, group_names: Sequence[str]
) -> dict[str, torch.Tensor]:
    """One score's mean over the examples that have one (a NaN score is none), overall (`name`) and per group
    (`name/group`, where the group has one), with the uncertainty figures of each (`with_uncertainty`)."""
    out: dict[str, torch.Tensor] = {}
    scored = ~torch.isnan(scores)  # a NaN score is no score (as in its uncertainty figures)
    if scored.any():
        out[name] = scores[scored].mean()
    for g, group_name in enumerate(group_names):
        in_group = (groups == g) & scored
        if in_group.any():
            out[f"{name}/{group_name}"] = scores[in_group].mean()
    out.update(with_uncertainty(name, scores, clusters, groups, group_names))
    return out
