"""How uncertain a mean over items is: its standard error and 95% interval, plain or clustered by item.

The items of a benchmark are a sample of the items it could have held (Miller 2024, "Adding Error Bars to Evals",
arXiv 2411.00640), so a mean over them has a standard error. Where one item is scored in several rows (Hu et al.'s
five option orders, both orders of the intentions' multiple choice, several sampled replies), the rows of an item
are not independent and the error is clustered by item: with N rows in C items, s̄ their mean and e = s - s̄,

    Var(s̄) = C / (C - 1) * (1 / N²) * Σ_items (Σ_{rows of the item} e)²

Miller's Appendix A derives the sum without the factor C / (C - 1); the factor is the usual finite-cluster
correction (CR1, as Stata's `mean, vce(cluster)` and inspect_ai's clustered `stderr` have it), chosen because it
makes the figure agree with itself: where every item has one row it is exactly the plain (CLT) standard error,
the sample standard deviation (ddof 1) over √N, as lm-evaluation-harness computes it, and where every item has
the same number of rows it is exactly the plain standard error of the items' means (so a task that averages an
item's rows before scoring it, as the intention tasks do, gets the same figure). The 95% interval is
s̄ ± t · SE with t Student's 0.975 quantile on C - 1 degrees of freedom (Stata's interval of a clustered mean; 1.96
for many items, 2.09 for 20), not clipped to the scores' range. Under two items there is no standard error.

`uncertainty_figures` gives the figures as metrics.json holds them, beside the metric's own `<name>` and
`<name>/<group>` (which it does not repeat):

- `<name>_stderr`, `<name>_ci95_low`, `<name>_ci95_high`: the standard error and the interval (absent under two
  items);
- `<name>_n`: the items (clusters) the mean is over; `<name>_rows`: the rows scored (n times the option orders, ...);
- per group (phenomenon, implicature type, label): the same with `/<group>` after the figure's name, as the
  metric's per-group key has it (`acc_stderr/Irony` beside `acc/Irony`); a group without rows has no keys.

`format_estimate` writes a table cell, `0.337 ± 0.022 (n=130)` (n: the items), and `metrics_cell` writes one from
metrics.json.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy import stats

from pragexp.utils.markdown import estimate_text
from pragexp.utils.results import figure_key, metrics_cell  # noqa: F401 (callers import them from here too)

CONFIDENCE = 0.95
FIGURES = ("stderr", "ci95_low", "ci95_high", "n", "rows")


@dataclass(frozen=True)
class MeanEstimate:
    mean: float
    stderr: float | None  # None under two items
    ci95: tuple[float, float] | None
    items: int  # clusters
    rows: int


def estimate_mean(scores: Sequence[float], clusters: Sequence[Hashable] | None = None) -> MeanEstimate:
    """The mean of `scores` with its standard error, clustered by `clusters` (one id per row: the item it
    scores; None: every row its own item). A NaN score is no score: its row is left out."""
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
    per_item = np.bincount(cluster_of, weights=values - mean, minlength=items)
    stderr = math.sqrt(items / (items - 1) * float(np.sum(per_item**2))) / rows
    half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, items - 1)) * stderr
    return MeanEstimate(mean, stderr, (mean - half, mean + half), items, rows)


def _plain(cluster: Hashable) -> Hashable:
    """A cluster id as a plain value (a 0-d tensor or numpy number as its Python number)."""
    return cluster.item() if hasattr(cluster, "item") else cluster


def uncertainty_figures(
    name: str,
    scores: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    groups: Sequence[str | None] | None = None,
) -> dict[str, float]:
    """The figures of the module's docstring for the score `name`, overall and per group: `scores` and
    `clusters` (item ids) as `estimate_mean` takes them, `groups` one label per row (None: in no group)."""
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    ids = list(range(len(values))) if clusters is None else list(clusters)
    labels = [None] * len(values) if groups is None else list(groups)
    if not len(ids) == len(labels) == len(values):
        raise ValueError(f"{len(values)} scores, {len(ids)} cluster ids and {len(labels)} group labels")
    out = _figures(name, values, ids, None)
    for group in dict.fromkeys(g for g in labels if g is not None):
        rows = [i for i, g in enumerate(labels) if g == group]
        out.update(_figures(name, values[rows], [ids[i] for i in rows], group))
    return out


def _figures(name: str, values: np.ndarray, ids: list, group: str | None) -> dict[str, float]:
    if np.isnan(values).all():
        return {}
    estimate = estimate_mean(values, ids)
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
    """A table cell: `0.337 ± 0.021 (n=650)`; without a standard error `0.337 (n=1)`, without n `0.337 ± 0.021`."""
    return estimate_text(mean, stderr, None if n is None else int(n), digits)


def with_uncertainty(
    name: str,
    scores: torch.Tensor,
    clusters: torch.Tensor,
    groups: torch.Tensor | None = None,
    group_names: Sequence[str] = (),
) -> dict[str, torch.Tensor]:
    """The uncertainty figures of a mean (`uncertainty_figures`) from its examples'
    scores, the ids of the items they score and their group ids (an index into `group_names`; -1: none)."""
    ids = groups.tolist() if groups is not None else [-1] * len(scores)
    labels = [group_names[g] if 0 <= g < len(group_names) else None for g in ids]
    figures = uncertainty_figures(name, scores.double().cpu().numpy(), clusters.tolist(), labels)
    return {key: torch.tensor(value) for key, value in figures.items()}
