"""Whether the paired tests hold their level and find a real difference: two runs A and B scored on samples
drawn from designs shaped like the real data, each pair tested by the code `report compare` runs
(pragexp.metrics.paired: McNemar's exact test for right/wrong with one row per unit, the sign-flip test over
units otherwise).

A unit's chance p_c of a right answer is drawn as in pragexp.metrics.simulation (beta, mean μ, correlation ρ):
both runs share it (they face the same item, so their answers agree more than chance), each shifts it on the
logit scale by its own normal draw of sd τ (a model finds some items easier than the other model does: the
interaction that makes rows of one unit lean the same way), and each row of A is right with A's chance, each
row of B with min(1, B's chance + Δ). Under the null, Δ = 0, A and B are exchangeable within a unit; the level
is the share of samples the test rejects at 5%, the power the same share with a planted Δ > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pragexp.metrics.paired import PERMUTATIONS, mcnemar_p, sign_flip_p
from pragexp.metrics.simulation import RUNS, _integers, unit_chances

LEVEL = 0.05


@dataclass(frozen=True)
class PairedDesign:
    name: str
    clusters: int
    rows: int | tuple[int, int]
    mean: float  # A's
    icc: float
    difference: float = 0.0  # Δ: 0 for the null
    interaction: float = 1.0  # τ: the sd of each run's own shift of a unit's chance, on the logit scale
    seed: int = 0

    @property
    def test(self) -> str:
        return "McNemar, exact" if self.rows == 1 else "sign-flip over units"

    @property
    def shape(self) -> str:
        if isinstance(self.rows, tuple):
            rows = f"{self.rows[0]}-{self.rows[1]} rows"
        else:
            rows = "1 row" if self.rows == 1 else f"{self.rows} rows"
        return (
            f"{self.clusters} units, {rows} each, A's mean {self.mean:g}, ρ {self.icc:g}, "
            f"Δ {self.difference:g}"
        )


@dataclass(frozen=True)
class Rejection:
    design: str
    shape: str
    test: str
    runs: int
    rate: float  # share of samples rejected at 5%
    by_rows: float  # the same for McNemar's test over rows, each row its own unit

    @property
    def mc_error(self) -> float:
        return math.sqrt(self.rate * (1 - self.rate) / self.runs)


def draw_pairs(design: PairedDesign, runs: int = RUNS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows right in A only, rows right in B only, rows right in both) per run and unit: each row's two
    answers drawn given the unit's chance, as consecutive binomials of the four outcomes."""
    rng = np.random.default_rng(design.seed)
    sizes = _integers(rng, design.rows, (runs, design.clusters))
    shared = unit_chances(rng, np.full(runs, design.mean), design.icc, sizes.shape)
    logit = np.log(np.clip(shared, 1e-6, 1 - 1e-6) / np.clip(1 - shared, 1e-6, 1))
    own = design.interaction * rng.standard_normal((2, *sizes.shape))
    chance_a, chance_b = 1 / (1 + np.exp(-(logit + own[0]))), 1 / (1 + np.exp(-(logit + own[1])))
    chance_b = np.minimum(1.0, chance_b + design.difference)
    outcomes = (chance_a * (1 - chance_b), (1 - chance_a) * chance_b, chance_a * chance_b)
    left, rest, counts = sizes, np.ones_like(chance_a), []
    for share in outcomes:
        counts.append(
            rng.binomial(left, np.clip(np.divide(share, rest, where=rest > 0, out=np.zeros_like(rest)), 0, 1))
        )
        left, rest = left - counts[-1], rest - share
    return counts[0], counts[1], counts[2]


def rejection(design: PairedDesign, runs: int = RUNS) -> Rejection:
    """How often the paired test rejects at 5% on the design's samples, and how often McNemar's test over rows
    (each row its own unit, as `compare` paired them before issue 46) would."""
    only_a, only_b, _ = draw_pairs(design, runs)
    if design.rows == 1:  # one right/wrong row per unit: the discordant pairs
        p = mcnemar_p(only_a.sum(-1), only_b.sum(-1))
    else:
        rng = np.random.default_rng(design.seed + 10_000)
        p = sign_flip_p((only_b - only_a).astype(np.float64), rng, PERMUTATIONS)
    by_rows = float(np.mean(mcnemar_p(only_a.sum(-1), only_b.sum(-1)) <= LEVEL))
    return Rejection(design.name, design.shape, design.test, runs, float(np.mean(p <= LEVEL)), by_rows)


HU = "Hu et al. phenomenon"
NULL_DESIGNS = (
    PairedDesign("one row per item", 200, 1, 0.6, 0.5, seed=31),
    PairedDesign("one row per item, few", 30, 1, 0.7, 0.5, seed=32),
    PairedDesign(HU, 22, 5, 0.5, 0.5, seed=33),
    PairedDesign(f"{HU}, few items (exact flips)", 12, 5, 0.4, 0.5, seed=34),
    PairedDesign("MultiPragEval, scenario in 4 languages", 120, 4, 0.4, 0.9, seed=35),
    PairedDesign("ToMATO, conversations", 60, (1, 30), 0.6, 0.3, seed=36),
)
POWER_DESIGNS = (
    PairedDesign("one row per item", 300, 1, 0.6, 0.5, 0.15, seed=41),
    PairedDesign(HU, 22, 5, 0.5, 0.5, 0.25, seed=43),
    PairedDesign("MultiPragEval, scenario in 4 languages", 120, 4, 0.4, 0.9, 0.1, seed=45),
    PairedDesign("ToMATO, conversations", 60, (1, 30), 0.6, 0.3, 0.15, seed=46),
)
