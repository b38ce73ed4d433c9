"""What a benchmark reports of a model choosing among each item's options, exact under DDP (see `examples`).

Per example (one item in one option order): `correct` (the true option chosen, a tie read by the protocol's
rule, as the task gives it: `pragexp.generation.ranking.TIES`), `p_true` (the probability of the true option,
the option scores renormalised over the item's options), the kind of the option chosen (a benchmark's
distractor kinds: literal, associate, non-sequitur, ...), and the correlation of the model's distribution over
the options with a reference one (people's answer shares). `compute()` gives

- `acc`, `p_true`, overall and per group (`acc/<group>`); an example may belong to several groups (the batch's
  `groups`: a language, a type and their pair), each group averaging its own examples;
- with views (an item shown in several option orders: Hu et al.'s five seeds), `acc_view/<view>` and
  `acc_view_std` (and per group): the accuracy of each view and the population standard deviation across
  views, the seed spread (overall `acc` is the mean over views, which hold the same items);
- with option kinds, `error_share/<kind>` (and `error_share/<kind>/<group>` for the kinds a group's wrong
  answers chose): of the wrong answers, the share that chose an option of that kind (how Hu et al. split
  errors into literal, associate, ... readings);
- with people's proportion correct per item, `human_corr` (and per group: per phenomenon, as Hu et al. report
  it): Pearson's r across items between the model's p_true on the item (its mean over the item's rows) and
  people's proportion correct, with `human_corr_p`, its interval and `human_corr_items`
  (`pragexp.metrics.people`);
- with reference distributions, `human_option_corr` (and per group): within each example, Pearson's r between
  the model's and the people's distribution over the item's options, averaged over the examples where both
  vary (`human_option_corr_items` counts them; with two options every r is +-1): how alike the two
  distributions are, not the paper's figure;
- with position names (an item's options lettered A, B, ...), `chosen/<position>`: the share of all examples
  whose choice was the option in that position, and `chosen/none` the share that chose none (a generated reply
  naming no option), so a model that always answers one letter shows it;
- `count`;
- each figure of `CHOICE_FIGURES` (`pragexp.metrics.choice_figures`: the one place that adds a mean to every
  LLM choice task), overall and per group, over the examples that have it;
- for `acc`, `p_true`, `human_option_corr` and each of `CHOICE_FIGURES`, overall and per group, the standard
  error and 95% interval of the mean, clustered by sampling unit (the batch's `cluster`: an item's option
  orders share it), with the units and rows counted: `acc_stderr`, `acc_ci95_low`, `acc_ci95_high`, `acc_n`,
  `acc_rows`, and `acc_stderr/<group>`, ... (`pragexp.metrics.uncertainty`); the same for each view's
  accuracy, each position's share chosen and, overall, each kind's share of the errors
  (`acc_view_stderr/<view>`, `chosen_stderr/<position>`, `error_share_stderr/<kind>`, ...: an error kind's
  share is a mean over the wrong answers, clustered alike);
- no interval for `acc_view_std` (a spread of the views' accuracies, a description of the sample, not an
  estimate of a mean), `human_corr` (its own interval and p-value, by Fisher's z: `pragexp.metrics.people`),
  the counts (`count`, `human_option_corr_items`, `human_corr_items`) nor the per-group error shares
  (`error_share/<kind>/<group>`, which no table prints).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torchmetrics import Metric

from pragexp.batches.types import PromptBatch
from pragexp.metrics import choice_figures
from pragexp.metrics.choice_figures import ChoiceFigure, ChoiceScores
from pragexp.metrics.people import item_correlation
from pragexp.metrics.uncertainty import group_figures, with_uncertainty
from pragexp.utils.per_example import first_per_index, gathered

COLUMNS = ("correct", "p_true", "corr", "people")  # then one column per figure of `CHOICE_FIGURES`
MEANS = ("acc", "p_true", "human_option_corr")  # the metric's name of each of the first three columns' mean


def pearson(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson's r of two equally long sequences; NaN where either does not vary."""
    x, y = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    x, y = x - x.mean(), y - y.mean()
    denominator = float(x.norm() * y.norm())
    return float((x * y).sum()) / denominator if denominator > 1e-12 else math.nan


def _one_hot(group: torch.Tensor, groups: int) -> torch.Tensor:
    """(examples, groups) membership of one group each (-1: none)."""
    out = torch.zeros(len(group), groups, dtype=torch.bool)
    known = (group >= 0) & (group < groups)
    out[known.nonzero().reshape(-1), group[known]] = True
    return out


def memberships(batch: PromptBatch, groups: int) -> torch.Tensor:
    """(examples, groups): where a data module puts an example in several groups (its "groups", a list of
    group ids per example: a language, a type and their pair), each of them; otherwise its "group" alone."""
    listed = batch["groups"]
    if not listed or all(g is None for g in listed):
        return _one_hot(batch["group"].long().reshape(-1).cpu(), groups)
    out = torch.zeros(len(listed), groups, dtype=torch.bool)
    for row, ids in enumerate(listed):
        out[row, list(ids or [])] = True
    return out


class ChoiceMetric(Metric):
    full_state_update = False

    def __init__(
        self,
        group_names: Sequence[str] = (),
        view_names: Sequence[str] = (),
        kind_names: Sequence[str] = (),
        position_names: Sequence[str] = (),
        figures: Sequence[ChoiceFigure] | None = None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.figures = choice_figures.figures(figures)
        self.group_names, self.view_names, self.kind_names = (
            list(group_names),
            list(view_names),
            list(kind_names),
        )
        self.position_names = list(position_names)
        for name in ("indices", "groups", "views", "kinds", "clusters", "values", "choices"):
            self.add_state(name, default=[], dist_reduce_fx="cat")

    def update(self, batch: PromptBatch, scores: ChoiceScores) -> None:
        """The batch's examples (their index, group or groups, view, sampling unit and people's proportion
        correct) with what the model scored on each."""
        index = batch["index"].long().reshape(-1)
        self.indices.append(index)
        self.clusters.append(batch["cluster"].long().reshape(-1))
        membership = memberships(batch, len(self.group_names)).to(index.device)
        self.groups.append(membership.reshape(len(index), len(self.group_names)))
        self.choices.append(scores.predicted.long().reshape(-1))
        self.views.append(batch["view"].long().reshape(-1))
        self.kinds.append(scores.kind.long().reshape(-1))
        p_true = scores.p_true
        people = batch["people_correct"].float().to(p_true.device)
        figures = [figure.per_example(batch, scores).float().to(p_true.device) for figure in self.figures]
        columns = (scores.correct.float(), p_true.float(), scores.corr.float(), people, *figures)
        self.values.append(torch.stack(columns, dim=1))

    def compute(self) -> dict[str, torch.Tensor]:
        indices = gathered(self.indices, torch.long)
        columns = (gathered(self.groups, torch.long), gathered(self.views, torch.long))
        columns += (gathered(self.kinds, torch.long), gathered(self.clusters, torch.long))
        values = gathered(self.values).reshape(-1, len(COLUMNS) + len(self.figures))
        columns += (values, gathered(self.choices, torch.long))
        _, members, views, kinds, clusters, values, choices = first_per_index(indices, *columns)
        if values.shape[0] == 0:
            return {}
        out = self._means(values, slice(None), "")
        for g, name in enumerate(self.group_names):
            rows = members[:, g]
            if rows.any():
                out.update(self._means(values, rows, f"/{name}", views[rows]))
                out.update(self._error_shares(values[rows, 0], kinds[rows], f"/{name}"))
        out.update(self._per_view(values[:, 0], views, ""))
        out.update(self._error_shares(values[:, 0], kinds))
        out.update(self._share_figures(values[:, 0], views, kinds, choices, clusters))
        for c, name in self._mean_columns():
            out.update(with_uncertainty(name, values[:, c], clusters))
            for g, group in enumerate(self.group_names):
                rows = members[:, g]
                if rows.any():  # the group's own figures (`acc_n/<group>`), not its rows' overall ones
                    labels = torch.zeros(int(rows.sum()), dtype=torch.long)
                    figures = with_uncertainty(name, values[rows, c], clusters[rows], labels, [group])
                    out.update({k: v for k, v in figures.items() if k.endswith(f"/{group}")})
        out.update(self._people(values, clusters, members))
        out.update(self._choice_shares(choices))
        out["count"] = torch.tensor(float(values.shape[0]))
        return out

    def _mean_columns(self) -> list[tuple[int, str]]:
        """(column, metric name) of every mean with its uncertainty figures: `MEANS`, then the figures'."""
        figures = [(len(COLUMNS) + f, figure.name) for f, figure in enumerate(self.figures)]
        return [*enumerate(MEANS), *figures]

    def _people(self, values, clusters, members) -> dict[str, torch.Tensor]:
        """Hu et al.'s comparison with people, across the items of all rows and of each group."""
        out = item_correlation("human_corr", values[:, 1], values[:, 3], clusters)
        for g, name in enumerate(self.group_names):
            rows = members[:, g]
            figures = item_correlation("human_corr", values[rows, 1], values[rows, 3], clusters[rows])
            out.update({f"{key}/{name}": value for key, value in figures.items()})
        return out

    def _share_figures(self, correct, views, kinds, choices, clusters) -> dict[str, torch.Tensor]:
        """The uncertainty figures of the overall shares per view, per chosen position and per error kind,
        each a mean over its rows clustered by unit (an error kind's over the wrong answers with a kind)."""
        out: dict[str, float] = {}
        for v, name in enumerate(self.view_names):
            out.update(group_figures("acc_view", correct[views == v], clusters[views == v], name))
        if self.position_names:
            positions = [*enumerate(self.position_names), (-1, "none")]
            for p, name in positions:
                out.update(group_figures("chosen", (choices == p).double(), clusters, name))
        wrong = (correct < 0.5) & (kinds >= 0)
        if self.kind_names and wrong.any():
            for k in torch.unique(kinds[wrong]).tolist():
                chose = (kinds[wrong] == k).double()
                out.update(group_figures("error_share", chose, clusters[wrong], self.kind_names[k]))
        return {key: torch.tensor(value) for key, value in out.items()}

    def _choice_shares(self, choices) -> dict[str, torch.Tensor]:
        """Of all examples, the share that chose each position (and none); nothing without position names."""
        if not self.position_names:
            return {}
        out = {f"chosen/{name}": (choices == p).float().mean() for p, name in enumerate(self.position_names)}
        out["chosen/none"] = (choices == -1).float().mean()
        return out

    def _means(self, values, rows, suffix: str, views=None) -> dict[str, torch.Tensor]:
        chosen = values[rows]
        out = {f"acc{suffix}": chosen[:, 0].mean(), f"p_true{suffix}": chosen[:, 1].mean()}
        corr = chosen[:, 2][~torch.isnan(chosen[:, 2])]
        if corr.numel():
            out[f"human_option_corr{suffix}"] = corr.mean()
            if not suffix:
                out["human_option_corr_items"] = torch.tensor(float(corr.numel()))
        for f, figure in enumerate(self.figures):
            column = chosen[:, len(COLUMNS) + f]
            if (~torch.isnan(column)).any():
                out[f"{figure.name}{suffix}"] = column[~torch.isnan(column)].mean()
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
