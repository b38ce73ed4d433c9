"""Whether the cluster bootstrap's F1 intervals hold (pragexp.metrics.bootstrap, as ClassificationMetric
writes them): classification samples drawn from designs shaped like the data, and the share of samples whose
interval covers the population's F1.

A design draws C units of its rows; each row's gold label from the design's class shares; a unit's chance of a
right answer p_c as in pragexp.metrics.simulation (beta, mean μ, correlation ρ), a wrong answer one of the
other labels at random. The population's F1 is the F1 of the expected confusion matrix, shares_k · (μ on the
diagonal, (1 - μ) / (K - 1) elsewhere): what the sample's F1 tends to as units grow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pragexp.metrics.bootstrap import RESAMPLES, bootstrap_f1, f1_figures
from pragexp.metrics.simulation import Coverage, unit_chances


@dataclass(frozen=True)
class ClassDesign:
    name: str
    clusters: int
    rows: int
    accuracy: float
    icc: float
    shares: tuple[float, ...]  # of the gold labels
    seed: int = 0

    @property
    def shape(self) -> str:
        rows = "1 row each" if self.rows == 1 else f"{self.rows} rows each"
        shares = "/".join(f"{s:g}" for s in self.shares)
        return f"{self.clusters} units, {rows}, accuracy {self.accuracy:g}, ρ {self.icc:g}, labels {shares}"


def population_f1(design: ClassDesign) -> np.ndarray:
    """Per class and macro (the last), the F1 of the expected confusion matrix."""
    labels = len(design.shares)
    wrong = (1 - design.accuracy) / (labels - 1)
    confusion = np.zeros((labels + 1, labels + 1))
    for k, share in enumerate(design.shares):
        confusion[k, :labels] = share * wrong
        confusion[k, k] = share * design.accuracy
    return f1_figures(confusion, labels)


def f1_coverage(design: ClassDesign, runs: int, resamples: int = RESAMPLES) -> tuple[Coverage, Coverage]:
    """(macro-F1's coverage, the lowest coverage of a class's F1) over `runs` samples."""
    rng = np.random.default_rng(design.seed)
    labels, truth = len(design.shares), population_f1(design)
    units = np.repeat(np.arange(design.clusters), design.rows)
    chances = unit_chances(rng, np.full(runs, design.accuracy), design.icc, (runs, design.clusters))
    covered = np.zeros(labels + 1)
    for run in range(runs):
        gold = rng.choice(labels, len(units), p=design.shares)
        right = rng.random(len(units)) < chances[run, units]
        preds = np.where(right, gold, (gold + rng.integers(1, labels, len(units))) % labels)
        found = bootstrap_f1(units, preds, gold, labels, resamples, seed=run)
        covered += (found.low <= truth) & (truth <= found.high)
    share = covered / runs
    worst = int(np.argmin(share[:labels]))
    return (
        Coverage(f"{design.name}: macro-F1", design.shape, runs, float(share[-1])),
        Coverage(f"{design.name}: F1 of class {worst} (the lowest)", design.shape, runs, float(share[worst])),
    )


F1_RUNS = 1_000
F1_DESIGNS = (
    ClassDesign("MultiPragEval-like, scenario in 4 languages", 120, 4, 0.6, 0.7, (0.4, 0.35, 0.25), seed=51),
    ClassDesign("Hu et al.-like phenomenon", 25, 5, 0.85, 0.5, (0.5, 0.3, 0.2), seed=52),
    ClassDesign("Circa-like, one row per item, a rare label", 300, 1, 0.6, 0.0, (0.6, 0.3, 0.1), seed=53),
)
