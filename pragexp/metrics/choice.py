"""What a benchmark reports of a model choosing among each item's options, exact under DDP (see `examples`).

Per example (one item in one option order): `correct` (the true option scores strictly higher than every other:
a tie is wrong, as LUDWIG counts it), `p_true` (the probability of the true option, the option scores
renormalised over the item's options), the kind of the option chosen (a benchmark's distractor kinds: literal,
associate, non-sequitur, ...), and the correlation of the model's distribution over the options with a reference
one (people's answer shares). `compute()` gives

- `acc`, `p_true`, overall and per group (`acc/<group>`);
- with views (an item shown in several option orders: Hu et al.'s five seeds), `acc_view/<view>` and
  `acc_view_std` (and per group): the accuracy of each view and the population standard deviation across views,
  the seed spread (overall `acc` is the mean over views, which hold the same items);
- with option kinds, `error_share/<kind>` (and `error_share/<kind>/<group>` for the kinds a group's wrong
  answers chose): of the wrong answers, the share that chose an option of that kind (how Hu et al. split errors
  into literal, associate, ... readings);
- with reference distributions, `human_corr` (and per group): the Pearson correlation between the model's and
  the people's distribution over an item's options, averaged over the examples where both vary (an item where
  either is constant has no correlation and is left out: `human_corr_items` counts those that have one);
- `count`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torchmetrics import Metric

from pragexp.utils.per_example import first_per_index, gathered

COLUMNS = ("correct", "p_true", "corr")


def pearson(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson's r of two equally long sequences; NaN where either does not vary."""
    x, y = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = float(x.norm() * y.norm())
    return float((x * y).sum()) / denominator if denominator > 1e-12 else math.nan


class ChoiceMetric(Metric):
    full_state_update = False

    def __init__(
        self,
        group_names: Sequence[str] = (),
        view_names: Sequence[str] = (),
        kind_names: Sequence[str] = (),
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.group_names, self.view_names, self.kind_names = (
            list(group_names),
            list(view_names),
            list(kind_names),
        )
        for name in ("indices", "groups", "views", "kinds", "values"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, index, group, view, correct, p_true, chosen_kind, corr) -> None:
        """Per example: dataset index, group id, view id and chosen option's kind id (-1: none), whether it is
        right, p(true option), correlation with the reference (NaN: none)."""
        self.indices.append(index.long().reshape(-1))
        self.groups.append(group.long().reshape(-1))
        self.views.append(view.long().reshape(-1))
        self.kinds.append(chosen_kind.long().reshape(-1))
        self.values.append(torch.stack([correct.float(), p_true.float(), corr.float()], dim=1))

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        columns = (gathered(self.groups, torch.long), gathered(self.views, torch.long))
        columns += (gathered(self.kinds, torch.long), gathered(self.values).reshape(-1, len(COLUMNS)))
        _, groups, views, kinds, values = first_per_index(indices, *columns)
        if values.shape[0] == 0:
            return {}
        out = self._means(values, slice(None), "")
        for g, name in enumerate(self.group_names):
            if (groups == g).any():
                out.update(self._means(values, groups == g, f"/{name}", views[groups == g]))
                out.update(self._error_shares(values[groups == g, 0], kinds[groups == g], f"/{name}"))
        out.update(self._per_view(values[:, 0], views, ""))
        out.update(self._error_shares(values[:, 0], kinds))
        out["count"] = torch.tensor(float(values.shape[0]))
        return out

    def _means(self, values, rows, suffix: str, views=None) -> dict[str, torch.Tensor]:
        chosen = values[rows]
        out = {f"acc{suffix}": chosen[:, 0].mean(), f"p_true{suffix}": chosen[:, 1].mean()}
        corr = chosen[:, 2][~torch.isnan(chosen[:, 2])]
        if corr.numel():
            out[f"human_corr{suffix}"] = corr.mean()
            if not suffix:
                out["human_corr_items"] = torch.tensor(float(corr.numel()))
        if views is not None and self.view_names:
            spread = self._per_view(chosen[:, 0], views, suffix)
            out.update({k: v for k, v in spread.items() if k.startswith("acc_view_std")})
        return out

    def _per_view(self, correct, views, suffix: str) -> dict[str, torch.Tensor]:
        if not self.view_names:
            return {}
        means = {
            name: correct[views == v].mean() for v, name in enumerate(self.view_names) if (views == v).any()
        }
        out = {f"acc_view/{name}": value for name, value in means.items()} if not suffix else {}
        if len(means) > 1:
            out[f"acc_view_std{suffix}"] = torch.stack(list(means.values())).std(unbiased=False)
        return out

    def _error_shares(self, correct, kinds, suffix: str = "") -> dict[str, torch.Tensor]:
        """Of the wrong answers, the share per chosen option's kind (only the kinds some answer chose, per
        group: a phenomenon has kinds of its own)."""
        wrong = (correct < 0.5) & (kinds >= 0)
        if not self.kind_names or not wrong.any():
            return {}
        counts = torch.bincount(kinds[wrong], minlength=len(self.kind_names)).float()
        shown = (
            range(len(self.kind_names)) if not suffix else [k for k in range(len(counts)) if counts[k] > 0]
        )
        return {f"error_share/{self.kind_names[k]}{suffix}": counts[k] / counts.sum() for k in shown}
