"""Accuracy over sets of examples that count only together: a set is right when every one of its examples is right.

BigToM's headline is of this kind (Gandhi et al. 2023, `get_contingency(..., "true_and_false")` in their
code/analysis/plot_utils.py): a story's true-belief and false-belief versions of one question are one set, right
only when both are, so a model that answers every item the same way scores nothing there. A data module puts an
example in a set by giving it the set's id (`"joint"`, an int; -1: in none); the examples of a set need not share a
batch.

`compute()` gives `joint_acc`, the share of sets right, and per group `joint_acc/<group>` for the groups that every
example of a set is in (a true-belief and a false-belief row are both in "forward_belief", so the set is; only one
of them is in "true_belief", so the set is not), each with its standard error and 95% interval clustered by the
examples' cluster (`joint_acc_stderr`, `joint_acc_n`: clusters, `joint_acc_rows`: sets;
`pragexp.metrics.uncertainty`). The examples of one set must share their cluster. Nothing when no example is in
a set.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torchmetrics import Metric

from pragexp.metrics.uncertainty import with_uncertainty
from pragexp.utils.per_example import first_per_index, gathered

NAME = "joint_acc"


class JointMetric(Metric):
    full_state_update = False

    def __init__(self, group_names: Sequence[str] = (), **kwargs):
        super().__init__(**kwargs)
        self.group_names = list(group_names)
        for name in ("indices", "sets", "correct", "clusters", "members"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, index, sets, correct, membership, cluster=None) -> None:
        """Per example: its dataset index, its set's id (-1: none), whether it is right, its groups ((examples,
        groups) booleans) and the id of the unit it was drawn with (None: the example itself)."""
        index = index.long().reshape(-1)
        self.indices.append(index)
        self.sets.append(sets.long().reshape(-1).to(index.device))
        self.correct.append(correct.float().reshape(-1).to(index.device))
        self.clusters.append((index if cluster is None else cluster).long().reshape(-1).to(index.device))
        self.members.append(membership.bool().reshape(len(index), len(self.group_names)).to(index.device))

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        if indices.numel() == 0:
            return {}
        columns = (
            gathered(self.sets, torch.long),
            gathered(self.correct),
            gathered(self.clusters, torch.long),
        )
        members = gathered(self.members, torch.bool).reshape(-1, len(self.group_names))
        _, sets, correct, clusters, members = first_per_index(indices, *columns, members)
        kept = sets >= 0
        if not kept.any():
            return {}
        right, cluster, groups = _per_set(sets[kept], correct[kept], clusters[kept], members[kept])
        out = {NAME: right.mean(), **with_uncertainty(NAME, right, cluster)}
        for g, group in enumerate(self.group_names):
            rows = groups[:, g]
            if rows.any():
                out[f"{NAME}/{group}"] = right[rows].mean()
                labels = torch.zeros(int(rows.sum()), dtype=torch.long)
                figures = with_uncertainty(NAME, right[rows], cluster[rows], labels, [group])
                out.update({k: v for k, v in figures.items() if k.endswith(f"/{group}")})
        return out


def _per_set(sets, correct, clusters, members) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per set, in id order: 1.0 when all its examples are right, its cluster, the groups all its examples are in."""
    ids, of = torch.unique(sets, return_inverse=True)
    n = len(ids)
    right = torch.ones(n).scatter_reduce(0, of, correct, "amin")
    low = torch.full((n,), torch.iinfo(torch.long).max).scatter_reduce(0, of, clusters, "amin")
    high = torch.full((n,), torch.iinfo(torch.long).min).scatter_reduce(0, of, clusters, "amax")
    if (low != high).any():
        bad = int(ids[(low != high).nonzero()[0]])
        raise ValueError(f"joint set {bad} holds examples of different clusters: a set lies within one unit")
    inside = torch.ones(n, members.shape[1], dtype=torch.long)
    inside = inside.scatter_reduce(0, of.unsqueeze(1).expand_as(members), members.long(), "amin")
    return right, low, inside.bool()
