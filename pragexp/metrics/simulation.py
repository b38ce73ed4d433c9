"""Whether the intervals hold: samples drawn from designs shaped like the real data, each scored by the code
that writes metrics.json (pragexp.metrics.intervals), and the share of samples whose 95% interval covers the
true mean.

A design draws C sampling units (items, scenarios, conversations), each with its rows (option orders, language
versions, questions). A unit's own chance of a right answer (or its mean graded score) p_c is drawn from a
beta distribution with the design's mean μ and intra-cluster correlation ρ (a = μ(1 - ρ)/ρ, b = (1 - μ)(1 -
ρ)/ρ: ρ is the correlation of two rows of one unit); its rows are right with chance p_c, or for a graded score
drawn from Beta(κ p_c, κ (1 - p_c)), κ = 4. Rows are independent of the unit's size, so the true mean is μ.
Where the design gives a range (19-25 items, a mean of 0.95-0.99), each sample draws its own from it,
uniformly: coverage is then averaged over the range, which smooths the saw-tooth coverage of a discrete score
over n and μ.

`perplexity_coverage` does the same for a ratio of sums (PragmatiCQA's perplexity over conversations);
pragexp.metrics.paired_simulation the paired tests' level and power. `python -m pragexp.metrics.simulation`
prints the table of experiments/statistics/README.md. Each design has its own seed: the same command, the same
figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pragexp.metrics.intervals import exp_ratio_interval, mean_interval, share_interval

RUNS = 2_000
GRADED_CONCENTRATION = 4.0
Span = float | tuple[float, float]


@dataclass(frozen=True)
class Design:
    name: str  # what it is shaped like
    clusters: int | tuple[int, int]  # C, or a range each sample draws from
    rows: int | tuple[int, int]  # rows per cluster, or a range each cluster draws from
    mean: Span  # μ, or a range each sample draws from
    icc: float  # ρ: 0 for independent rows
    graded: bool = False  # scores in [0, 1] rather than right/wrong
    seed: int = 0

    @property
    def shape(self) -> str:
        def text(value) -> str:
            return f"{value[0]:g}-{value[1]:g}" if isinstance(value, tuple) else f"{value:g}"

        rows = "1 row each" if self.rows == 1 else f"{text(self.rows)} rows each"
        score = "graded" if self.graded else "right/wrong"
        return f"{text(self.clusters)} units, {rows}, mean {text(self.mean)}, ρ {self.icc:g}, {score}"


def _integers(rng, span: int | tuple[int, int], shape) -> np.ndarray:
    if isinstance(span, tuple):
        return rng.integers(span[0], span[1] + 1, shape)
    return np.full(shape, span)


def _means(rng, span: Span, runs: int) -> np.ndarray:
    return rng.uniform(*span, runs) if isinstance(span, tuple) else np.full(runs, float(span))


def unit_chances(rng, mean: np.ndarray, icc: float, shape) -> np.ndarray:
    """p_c per (run, unit): beta with mean `mean` (one per run) and intra-cluster correlation `icc`."""
    mean = np.broadcast_to(mean[:, None], shape)
    if icc <= 0:
        return mean.copy()
    return rng.beta(mean * (1 - icc) / icc, (1 - mean) * (1 - icc) / icc)


def draw(design: Design, runs: int = RUNS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(totals, sizes, true means): per run and unit the sum of its rows' scores and its rows (0: no such
    unit, where C varies), and each run's μ."""
    rng = np.random.default_rng(design.seed)
    most = design.clusters[1] if isinstance(design.clusters, tuple) else design.clusters
    present = np.arange(most) < _integers(rng, design.clusters, (runs, 1))
    sizes = _integers(rng, design.rows, (runs, most)) * present
    truth = _means(rng, design.mean, runs)
    chance = unit_chances(rng, truth, design.icc, sizes.shape)
    if not design.graded:
        return rng.binomial(sizes, chance).astype(np.float64), sizes.astype(np.float64), truth
    longest = int(sizes.max())
    k = GRADED_CONCENTRATION
    scores = rng.beta(
        k * chance[..., None] + 1e-12, k * (1 - chance[..., None]) + 1e-12, (*sizes.shape, longest)
    )
    scores *= np.arange(longest) < sizes[..., None]
    return scores.sum(-1), sizes.astype(np.float64), truth


@dataclass(frozen=True)
class Coverage:
    design: str
    shape: str
    runs: int
    covered: float  # share of runs whose interval holds the true value
    old: float | None = None  # the same for the interval before issue 46 (mean ± t_{C-1} · CR1 SE)
    plain_wilson: float | None = None  # for a share: the Wilson-type interval without the pseudo-cluster

    @property
    def mc_error(self) -> float:
        """The Monte-Carlo standard error of `covered`."""
        return math.sqrt(self.covered * (1 - self.covered) / self.runs)


def old_interval(totals: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval before issue 46: mean ± t_{C-1} · SE, SE clustered with the CR1 factor C / (C - 1)."""
    from scipy import stats

    rows, clusters = sizes.sum(-1), (sizes > 0).sum(-1)
    mean = totals.sum(-1) / rows
    residual = totals - mean[:, None] * sizes
    stderr = np.sqrt(clusters / (clusters - 1) * np.sum(residual**2, -1)) / rows
    half = stats.t.ppf(0.975, clusters - 1) * stderr
    return mean - half, mean + half


def coverage(design: Design, runs: int = RUNS) -> Coverage:
    """How often the 95% interval metrics.json gets (pragexp.metrics.intervals.mean_interval) covers μ."""
    totals, sizes, truth = draw(design, runs)

    def covers(low, high) -> float:
        return float(np.mean((low <= truth) & (truth <= high)))

    interval = mean_interval(totals, sizes, share=not design.graded)
    plain = None
    if not design.graded:
        without = share_interval(totals, sizes, pseudo_cluster=False)
        plain = covers(without.low, without.high)
    covered = covers(interval.low, interval.high)
    return Coverage(design.name, design.shape, runs, covered, covers(*old_interval(totals, sizes)), plain)


# -- perplexity: a ratio of sums over conversations ----------------------------------------------------------


@dataclass(frozen=True)
class RatioDesign:
    name: str
    clusters: int
    rows: tuple[int, int]  # questions per conversation
    tokens: tuple[int, int]  # a gold target's tokens
    log_ppl: float  # the true log perplexity: nats per token
    between: float  # sd of a conversation's own nats per token
    within: float  # sd of one token's NLL (a target's mean NLL has sd within / √tokens)
    seed: int = 0

    @property
    def shape(self) -> str:
        return (
            f"{self.clusters} units, {self.rows[0]}-{self.rows[1]} rows each of {self.tokens[0]}-"
            f"{self.tokens[1]} tokens, ppl {math.exp(self.log_ppl):.1f}"
        )


def perplexity_coverage(design: RatioDesign, runs: int = RUNS) -> Coverage:
    """How often the perplexity's 95% interval (intervals.exp_ratio_interval) covers exp(true nats per
    token)."""
    rng = np.random.default_rng(design.seed)
    sizes = _integers(rng, design.rows, (runs, design.clusters))
    longest = int(sizes.max())
    tokens = rng.integers(design.tokens[0], design.tokens[1] + 1, (runs, design.clusters, longest))
    tokens = tokens * (np.arange(longest) < sizes[..., None])
    own = design.log_ppl + design.between * rng.standard_normal((runs, design.clusters, 1))
    noise = design.within * np.sqrt(tokens) * rng.standard_normal(tokens.shape)
    nll = own * tokens + noise
    interval = exp_ratio_interval(nll.sum(-1), tokens.sum(-1).astype(np.float64))
    truth = math.exp(design.log_ppl)
    covered = (interval.low <= truth) & (truth <= interval.high)
    return Coverage(design.name, design.shape, runs, float(np.mean(covered)))


HU = "Hu et al. phenomenon"
MULTIPRAGEVAL = "MultiPragEval, scenario in 4 languages"
DESIGNS = (
    Design(f"(a) {HU}", (19, 25), 5, 0.3, 0.5, seed=1),
    Design(f"(a) {HU}", (19, 25), 5, 0.6, 0.8, seed=2),
    Design(f"(a) {HU}", (19, 25), 5, 0.85, 0.5, seed=3),
    Design(f"(b) {MULTIPRAGEVAL}, pooled", 120, 4, 0.4, 0.9, seed=4),
    Design(f"(b) {MULTIPRAGEVAL}, pooled", 300, 4, 0.2, 0.9, seed=5),
    Design(f"(b) {MULTIPRAGEVAL}, one maxim", 20, 4, 0.25, 0.9, seed=6),
    Design("(c) ToMATO, conversations", 40, (1, 30), 0.6, 0.3, seed=7),
    Design("(c) ToMATO, conversations", 300, (1, 30), 0.4, 0.3, seed=8),
    Design("(c) PragmatiCQA, conversations", 30, (2, 20), 0.5, 0.3, seed=9),
    Design("(c) PragmatiCQA, conversations, F1", 67, (2, 20), 0.3, 0.3, graded=True, seed=10),
    Design("(d) one row per item", 100, 1, 0.7, 0.0, seed=11),
    Design("(d) one row per item", 500, 1, 0.5, 0.0, seed=12),
    Design("(d) one row per item, p_true", 200, 1, 0.6, 0.0, graded=True, seed=13),
    Design(f"(e) {HU}, near ceiling", (19, 25), 5, (0.95, 0.99), 0.3, seed=14),
    Design(f"(e) {HU}, near ceiling", (19, 25), 5, (0.95, 0.99), 0.8, seed=15),
    Design("(e) one row per item, near ceiling", (50, 200), 1, (0.95, 0.99), 0.0, seed=16),
    Design(f"(e) {MULTIPRAGEVAL}, one maxim, near floor", 20, 4, (0.01, 0.05), 0.9, seed=17),
)
PERPLEXITY_DESIGNS = (
    RatioDesign("(f) PragmatiCQA perplexity, conversations", 67, (2, 20), (5, 60), 1.2, 0.3, 2.0, seed=18),
    RatioDesign(
        "(f) PragmatiCQA perplexity, few conversations", 20, (2, 20), (5, 60), 2.5, 0.5, 2.5, seed=19
    ),
)
