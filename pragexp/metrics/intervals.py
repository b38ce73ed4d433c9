"""The standard error and 95% interval of a mean, or of a ratio of sums, over rows clustered by sampling unit:
computed on arrays whose last axis is the clusters, so that one call serves one table cell or the 2,000
simulated samples of the simulation suite (pragexp.metrics.simulation) alike.

A sample is given per cluster: `totals`, the sum of the cluster's scores (of a ratio's numerator: a
perplexity's NLL), and `sizes`, its rows (the denominator: tokens). A cluster of size 0 is absent (padding).
With C clusters, W = Σ sizes, r̂ = Σ totals / W, the cluster's residual e_c = total_c - r̂ · size_c and its
share h_c = size_c / W:

- standard error, CR2 (Bell & McCaffrey 2002; the small-sample correction Imbens & Kolesár 2016 recommend):
  Var = Σ_c e_c² / (1 - h_c) / W². Where every cluster has the same size, 1 / (1 - h_c) = C / (C - 1) and this
  is the CR1 error (Stata's `vce(cluster)`); with one row per cluster it is the plain standard error, the
  sample standard deviation over √N. Unequal clusters (conversations of 1 to 30 questions) weigh the large
  ones more.
- degrees of freedom, Bell–McCaffrey's (Satterthwaite's under independent rows, closed form for a mean):
  df = W² / (Σ s_c² u_c⁴ - 2 Σ s_c³ u_c⁴ / W + (Σ s_c² u_c²)² / W²), s_c = size_c, u_c² = 1 / (1 - h_c);
  C - 1 for equal clusters, fewer where a few clusters hold most rows.
- interval of a share (every score 0 or 1: right/wrong, unparsed, ...): a Wilson-type interval on the
  effective sample size n* = W / deff (Korn & Graubard 1998's approach: Wilson's score interval with t on df
  in place of z is Wilson's with z on their df-adjusted n* (z / t)²), the design effect deff = max(1, SE² W /
  (p̂(1 - p̂)), deff⁺), where deff⁺ is the same figure with one more cluster added to the sample, half right,
  as large as the cluster a random row is in (Σ s_c² / W). That pseudo-cluster is ours, chosen by measuring
  coverage (experiments/statistics/README.md): with few clusters and a share near 0 or 1 a sample often holds
  no failing unit, its rows' scattered errors make the design effect look like 1, and the interval came out
  too narrow; where every row is right the data say nothing of the design effect and deff⁺ alone decides. A
  Wilson-type interval lies inside [0, 1] and is never of width 0.
- interval of any other mean: r̂ ± t·SE, t Student's 0.975 quantile on df.

Under two clusters there is no standard error (NaN here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Clustered:
    """Per sample (the arrays' leading axes): the estimate, its CR2 standard error and Bell–McCaffrey degrees
    of freedom (NaN under two clusters), the clusters present and the rows (W) in them."""

    estimate: np.ndarray
    stderr: np.ndarray
    df: np.ndarray
    clusters: np.ndarray
    weight: np.ndarray


@dataclass(frozen=True)
class Interval:
    estimate: np.ndarray
    stderr: np.ndarray
    low: np.ndarray
    high: np.ndarray
    clusters: np.ndarray
    df: np.ndarray


def clustered(totals, sizes) -> Clustered:
    """r̂ = Σ totals / Σ sizes with its CR2 standard error and Bell–McCaffrey df (see the module's
    docstring)."""
    totals, sizes = np.asarray(totals, dtype=np.float64), np.asarray(sizes, dtype=np.float64)
    weight = sizes.sum(-1)
    clusters = (sizes > 0).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = totals.sum(-1) / weight
        residual = totals - estimate[..., None] * sizes
        share = sizes / weight[..., None]
        u2 = np.where(sizes > 0, 1.0 / (1.0 - np.where(sizes > 0, share, 0.0)), 0.0)
        stderr = np.sqrt(np.sum(residual**2 * u2, -1)) / weight
        spread = np.sum(sizes**2 * u2**2, -1) - 2 * np.sum(sizes**3 * u2**2, -1) / weight
        df = weight**2 / (spread + np.sum(sizes**2 * u2, -1) ** 2 / weight**2)
    few = clusters < 2
    return Clustered(estimate, np.where(few, np.nan, stderr), np.where(few, np.nan, df), clusters, weight)


def quantile(df) -> np.ndarray:
    """Student's t for a two-sided 95% interval on `df` degrees of freedom."""
    return stats.t.ppf(0.5 + CONFIDENCE / 2, df)


def wald(c: Clustered) -> tuple[np.ndarray, np.ndarray]:
    half = quantile(c.df) * c.stderr
    return c.estimate - half, c.estimate + half


def design_effect(c: Clustered) -> np.ndarray:
    """SE² over the SE² of as many independent right/wrong rows: inf where the share is 0 or 1 (no figure)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(c.stderr > 0, c.stderr**2 * c.weight / (c.estimate * (1 - c.estimate)), 0.0)


def with_pseudo_cluster(totals, sizes) -> Clustered:
    """The sample with one more cluster, half right, as large as the cluster a random row is in (Σ size² /
    Σ size: the clusters' size where all have one): see the module's docstring."""
    totals, sizes = np.asarray(totals, dtype=np.float64), np.asarray(sizes, dtype=np.float64)
    size = np.sum(sizes**2, -1, keepdims=True) / sizes.sum(-1, keepdims=True)
    return clustered(np.concatenate([totals, size / 2], -1), np.concatenate([sizes, size], -1))


def wilson(share, n, q) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a share from n draws with quantile q (n may be inf: a point)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = q**2 / n
        centre = (share + spread / 2) / (1 + spread)
        half = q / (1 + spread) * np.sqrt(share * (1 - share) / n + spread / (4 * n))
    return centre - half, centre + half


def share_interval(totals, sizes, pseudo_cluster: bool = True) -> Interval:
    """The Wilson-type interval of a share clustered by unit (see the module's docstring; without the
    pseudo-cluster, as the simulation suite compares, a share of 0 or 1 takes n* = W)."""
    c = clustered(totals, sizes)
    deff = design_effect(c)
    if pseudo_cluster:
        deff = np.maximum(deff, design_effect(with_pseudo_cluster(totals, sizes)))
    deff = np.maximum(deff, 1.0)
    low, high = wilson(c.estimate, c.weight / deff, quantile(c.df))
    few = c.clusters < 2
    low, high = np.where(few, np.nan, np.clip(low, 0, 1)), np.where(few, np.nan, np.clip(high, 0, 1))
    return Interval(c.estimate, c.stderr, low, high, c.clusters, c.df)


def mean_interval(totals, sizes, share: bool = False) -> Interval:
    """The mean's estimate, standard error and 95% interval: Wilson-type for a share, else mean ± t·SE."""
    if share:
        return share_interval(totals, sizes)
    c = clustered(totals, sizes)
    low, high = wald(c)
    return Interval(c.estimate, c.stderr, low, high, c.clusters, c.df)


def exp_ratio_interval(totals, sizes) -> Interval:
    """exp(r̂) (a perplexity: exp of NLL over tokens) with its 95% interval, exp of r̂'s (r̂ ± t·SE: the
    interval of the log, so it stays above 0 and is skewed as the figure is), and its standard error by the
    delta method, exp(r̂) · SE(r̂)."""
    c = clustered(totals, sizes)
    low, high = wald(c)
    value = np.exp(c.estimate)
    return Interval(value, value * c.stderr, np.exp(low), np.exp(high), c.clusters, c.df)
