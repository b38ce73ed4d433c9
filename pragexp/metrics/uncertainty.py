"""How uncertain a mean over items is: its standard error and 95% interval, clustered by sampling unit.

The items of a benchmark are a sample of the items it could have held (Miller 2024, "Adding Error Bars to
Evals", arXiv 2411.00640), so a mean over them has a standard error. Where one unit is scored in several rows
(Hu et al.'s five option orders, a MultiPragEval scenario in four languages, the questions of one
conversation, several sampled replies), the rows of a unit are not independent and the error is clustered by
unit: with N rows in C units, s̄ their mean, e_c = Σ_{rows of unit c} (s - s̄) and h_c = (rows of unit c) / N,

    Var(s̄) = (1 / N²) · Σ_units e_c² / (1 - h_c)          (CR2, pragexp.metrics.intervals)

Miller's Appendix A derives the sum without the factor 1 / (1 - h_c). Where every unit has the same number of
rows the factor is C / (C - 1) (CR1, as Stata's `mean, vce(cluster)` and inspect_ai's clustered `stderr` have
it) and the figure agrees with itself: where every unit has one row it is exactly the plain (CLT) standard
error, the sample standard deviation (ddof 1) over √N, as lm-evaluation-harness computes it, and where every
unit has the same number of rows it is exactly the plain standard error of the units' means (so a task that
averages an item's rows before scoring it, as the intention tasks do, gets the same figure). With units of
unequal size (conversations of 1 to 30 questions) CR2 weighs the large ones more, as it should (Bell &
McCaffrey 2002; Imbens & Kolesár 2016).

The 95% interval (pragexp.metrics.intervals; its coverage measured in experiments/statistics/README.md):

- of a share, every score 0 or 1 (right/wrong, unparsed): a Wilson-type interval on the effective sample size
  N / design effect, on Bell–McCaffrey's degrees of freedom (C - 1 for units of equal size). It lies in [0, 1]
  and holds near 0 and 1, where the Wald interval s̄ ± t·SE covered the true accuracy in only 48-75% of the
  samples of 19-25 units at 0.95-0.99 (or 0.01-0.05);
- of any other mean: s̄ ± t · SE, t Student's 0.975 quantile on the same degrees of freedom (2.09 for 20 units
  of equal size, 1.96 for many), not clipped to the scores' range.

Under two units there is no standard error.

`uncertainty_figures` gives the figures as metrics.json holds them, beside the metric's own `<name>` and
`<name>/<group>` (which it does not repeat):

- `<name>_stderr`, `<name>_ci95_low`, `<name>_ci95_high`: the standard error and the interval (absent under
  two units);
- `<name>_n`: the units (clusters) the mean is over; `<name>_rows`: the rows scored (n times the option
  orders, ...);
- per group (phenomenon, implicature type, label): the same with `/<group>` after the figure's name, as the
  metric's per-group key has it (`acc_stderr/Irony` beside `acc/Irony`); a group without rows has no keys.

`format_estimate` writes a table cell, `0.337 ± 0.022 (n=130)` (n: the units), and `metrics_cell` writes one
from metrics.json.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from pragexp.metrics.intervals import mean_interval
from pragexp.reporting.markdown import estimate_text
from pragexp.reporting.results import figure_key, metrics_cell  # noqa: F401 (callers import them from here)

FIGURES = ("stderr", "ci95_low", "ci95_high", "n", "rows")


@dataclass(frozen=True)
class MeanEstimate:
    mean: float
    stderr: float | None  # None under two items
    ci95: tuple[float, float] | None
    items: int  # clusters
    rows: int


def estimate_mean(
    scores: Sequence[float], clusters: Sequence[Hashable] | None = None, share: bool | None = None
) -> MeanEstimate:
    """The mean of `scores` with its standard error, clustered by `clusters` (one id per row: the unit it
    belongs to; None: every row its own unit). `share`: whether the scores are right/wrong (the interval of a
    share, see the module's docstring); None: whether every score is 0 or 1. A NaN score is no score: its row
    is left out."""
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    ids = list(range(len(values))) if clusters is None else list(clusters)
    if len(ids) != len(values):
        raise ValueError(f"{len(values)} scores but {len(ids)} cluster ids")
    kept = ~np.isnan(values)
    values = values[kept]
    if values.size == 0:
        raise ValueError("no scores to average")
    codes: dict[Hashable, int] = {}
    cluster_of = np.array(
        [codes.setdefault(_plain(c), len(codes)) for c, k in zip(ids, kept, strict=True) if k]
    )
    items, rows, mean = len(codes), int(values.size), float(values.mean())
    if items < 2:
        return MeanEstimate(mean, None, None, items, rows)
    if share is None:
        share = bool(np.isin(values, (0.0, 1.0)).all())
    totals = np.bincount(cluster_of, weights=values, minlength=items)
    interval = mean_interval(totals, np.bincount(cluster_of, minlength=items), share)
    ci95 = (float(interval.low), float(interval.high))
    return MeanEstimate(mean, float(interval.stderr), ci95, items, rows)


def _plain(cluster: Hashable) -> Hashable:
    """A cluster id as a plain value (a 0-d tensor or numpy number as its Python number)."""
    return cluster.item() if hasattr(cluster, "item") else cluster


def uncertainty_figures(
    name: str,
    scores: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    groups: Sequence[str | None] | None = None,
    share: bool | None = None,
) -> dict[str, float]:
    """The figures of the module's docstring for the score `name`, overall and per group: `scores`, `clusters`
    (unit ids) and `share` as `estimate_mean` takes them, `groups` one label per row (None: in no group)."""
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    ids = list(range(len(values))) if clusters is None else list(clusters)
    labels = [None] * len(values) if groups is None else list(groups)
    if not len(ids) == len(labels) == len(values):
        raise ValueError(f"{len(values)} scores, {len(ids)} cluster ids and {len(labels)} group labels")
    out = group_figures(name, values, ids, None, share)
    for group in dict.fromkeys(g for g in labels if g is not None):
        rows = [i for i, g in enumerate(labels) if g == group]
        out.update(group_figures(name, values[rows], [ids[i] for i in rows], group, share))
    return out


def group_figures(
    name: str, values, ids, group: str | None = None, share: bool | None = None
) -> dict[str, float]:
    """The figures of one mean (`<name>_stderr/<group>`, ...; without a group `<name>_stderr`, ...) of the
    rows' `values` clustered by `ids` (arrays, lists or tensors); {} without a score."""
    values = np.asarray(values.cpu() if hasattr(values, "cpu") else values, dtype=np.float64).reshape(-1)
    ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    if values.size == 0 or np.isnan(values).all():
        return {}
    estimate = estimate_mean(values, ids, share)
    out = {
        figure_key(name, "n", group): float(estimate.items),
        figure_key(name, "rows", group): float(estimate.rows),
    }
    if estimate.stderr is not None:
        out[figure_key(name, "stderr", group)] = estimate.stderr
        out[figure_key(name, "ci95_low", group)], out[figure_key(name, "ci95_high", group)] = estimate.ci95
    return out


def is_uncertainty_key(key: str) -> bool:
    """Whether a metrics.json key is one of these figures (`test/acc_stderr`, `test/acc_n/Irony`, ...): a part
    after the stage ends in `_<figure>` (a group named so would be taken for one)."""
    return any(part.endswith(f"_{figure}") for part in key.split("/")[1:] for figure in FIGURES)


def format_estimate(mean: float, stderr: float | None = None, n: int | None = None, digits: int = 3) -> str:
    """A table cell: `0.337 ± 0.021 (n=650)`; without a standard error `0.337 (n=1)`, without n `0.337 ±
    0.021`."""
    return estimate_text(mean, stderr, None if n is None else int(n), digits)


def with_uncertainty(
    name: str,
    scores: torch.Tensor,
    clusters: torch.Tensor,
    groups: torch.Tensor | None = None,
    group_names: Sequence[str] = (),
    share: bool | None = None,
) -> dict[str, torch.Tensor]:
    """The uncertainty figures of a mean (`uncertainty_figures`) from its examples' scores, the ids of the
    units they belong to, their group ids (an index into `group_names`; -1: none) and whether the scores are a
    share (None: whether every score is 0 or 1)."""
    ids = groups.tolist() if groups is not None else [-1] * len(scores)
    labels = [group_names[g] if 0 <= g < len(group_names) else None for g in ids]
    figures = uncertainty_figures(name, scores.double().cpu().numpy(), clusters.tolist(), labels, share)
    return {key: torch.tensor(value) for key, value in figures.items()}
