"""The clustered standard error, degrees of freedom and intervals on arrays (pragexp/metrics/intervals.py):
closed forms by hand, scipy's Wilson interval, and the array form agreeing with one sample at a time."""

import math

import numpy as np
import pytest
from scipy import stats

from pragexp.metrics.intervals import clustered, exp_ratio_interval, mean_interval, wilson
from pragexp.metrics.uncertainty import estimate_mean


def test_wilson_is_scipys_wilson_interval():
    for right, n in ((0, 20), (3, 20), (17, 20), (20, 20), (45, 60)):
        ours = wilson(right / n, n, stats.norm.ppf(0.975))
        theirs = stats.binomtest(right, n).proportion_ci(0.95, method="wilson")
        assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)
    assert wilson(0.3, math.inf, 2.0) == (0.3, 0.3)  # infinitely many draws: a point


def test_ratio_standard_error_and_degrees_of_freedom_by_hand():
    # Three conversations: NLL 6 over 4 tokens, 3 over 3, 1 over 1: r = 10 / 8 = 1.25, e = 1, -0.75, -0.25,
    # h = 1/2, 3/8, 1/8. CR2: Var = (1 / (1/2) + 0.5625 / (5/8) + 0.0625 / (7/8)) / 64.
    c = clustered([6.0, 3.0, 1.0], [4.0, 3.0, 1.0])
    assert float(c.estimate) == 1.25
    assert float(c.stderr) == pytest.approx(math.sqrt((2 + 0.9 + 0.0625 / 0.875) / 64))
    # Bell-McCaffrey: s = 4, 3, 1 tokens, u² = 1 / (1 - h) = 2, 1.6, 8/7, W = 8.
    s, u2 = np.array([4.0, 3.0, 1.0]), np.array([2.0, 1.6, 8 / 7])
    df = 64 / (np.sum(s**2 * u2**2) - 2 * np.sum(s**3 * u2**2) / 8 + np.sum(s**2 * u2) ** 2 / 64)
    assert float(c.df) == pytest.approx(df)
    assert 1 < df < 2  # fewer than C - 1 = 2: one conversation holds half the tokens
    interval = exp_ratio_interval([6.0, 3.0, 1.0], [4.0, 3.0, 1.0])
    half = stats.t.ppf(0.975, df) * float(c.stderr)
    assert (interval.low, interval.high) == pytest.approx((math.exp(1.25 - half), math.exp(1.25 + half)))
    assert float(interval.stderr) == pytest.approx(math.exp(1.25) * float(c.stderr))


def test_one_token_per_row_is_the_mean_of_the_rows():
    nll = np.array([0.3, 2.0, 1.1, 0.7, 1.6])
    interval = exp_ratio_interval(nll, np.ones(5))
    mean = estimate_mean(nll)
    assert (math.log(interval.low), math.log(interval.high)) == pytest.approx(mean.ci95)


def test_absent_clusters_and_many_samples_at_once():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 6, (50, 12)).astype(float)
    sizes[:, 9:] *= rng.random((50, 3)) < 0.5  # some samples hold fewer clusters: size 0 is no cluster
    totals = rng.binomial(sizes.astype(int), 0.7).astype(float)
    together = mean_interval(totals, sizes, share=True)
    for run in (0, 7, 33):
        present = sizes[run] > 0
        alone = mean_interval(totals[run][present], sizes[run][present], share=True)
        assert (float(alone.low), float(alone.high)) == pytest.approx((together.low[run], together.high[run]))
        assert float(alone.stderr) == pytest.approx(together.stderr[run])
        assert int(alone.clusters) == int(together.clusters[run]) == present.sum()


def test_under_two_clusters_there_is_no_interval():
    one = mean_interval([3.0], [5.0], share=True)
    assert math.isnan(float(one.stderr)) and math.isnan(float(one.low))
    assert float(one.estimate) == 0.6


def test_a_share_interval_stays_in_0_1_where_the_wald_interval_does_not():
    # 20 items of 5 rows, one wrong row in all: the Wald interval reaches above 1 and is 0.02 wide.
    totals, sizes = np.full(20, 5.0), np.full(20, 5.0)
    totals[0] = 4.0
    share = mean_interval(totals, sizes, share=True)
    wald = mean_interval(totals, sizes, share=False)
    assert float(wald.high) > 1.0 and float(share.high) <= 1.0
    assert float(share.low) < float(wald.low) - 0.02  # the scattered error says little of the units' spread
