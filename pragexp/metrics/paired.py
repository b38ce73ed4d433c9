"""Two runs' scores on the same items, compared unit by unit: the rows of their prediction records matched,
and per score the difference B - A with a paired bootstrap 95% interval and an exact paired test
(pragexp.report.compare prints it, with the p-values adjusted for the table's number of comparisons:
pragexp.metrics.multiple).

- rows match by their dataset `index` and what describes the example in both runs (gold answer, item, text
  with its whitespace collapsed: `IDENTITY_FIELDS`); runs whose rows do not all match are refused, naming how
  many differ;
- the unit: the row's `cluster` where the task writes one (the sampling unit the row belongs to: an item, a
  conversation, a scenario), else its index; units are taken in the order of their ids, so nothing below
  depends on the order of the rows;
- interval: the percentile interval of the difference of means over `RESAMPLES` resamples of the units, each
  with all its rows (a cluster bootstrap: Hu et al.'s option orders of one item travel together), drawn by
  `scipy.stats.bootstrap` from `numpy.random.default_rng(seed)`: the same command prints the same interval;
- test: for right/wrong with one row per unit, McNemar's exact test (a binomial test of the discordant pairs,
  `mcnemar_p`); otherwise a sign-flip permutation test of the units' summed differences (`sign_flip_p`: A and
  B swap within a unit), exact where the 2^units sign flips number at most `PERMUTATIONS`, else that many
  random flips from the same seeded generator, p = (1 + flips at least as extreme) / (1 + flips). (With one
  row per unit and right/wrong scores the two tests are the same test.) The simulation suite
  (pragexp.metrics.paired_simulation) measures both tests' level and power on designs shaped like the data.
- each run's mean carries its standard error over units, clustered by unit (pragexp.metrics.uncertainty).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from pragexp.metrics.uncertainty import MeanEstimate, estimate_mean

IDENTITY_FIELDS = (
    "gold",
    "cluster",
    "phenomenon",
    "item_id",
    "seed",
    "idx",
    "dialog_id",
    "round",
    "utterance",
    "response",
    "question",
    "true_option",
)
GROUP_FIELDS = ("group", "phenomenon")
SCORE_FIELDS = ("acc", "p_true", "f1_lit", "f1_prag", "f1_prag_ceiling", "well_formed", "q")
RESAMPLES = 10_000
PERMUTATIONS = 9_999
ALL = "all"


@dataclass(frozen=True)
class Row:
    key: tuple
    cluster: object  # the record's `cluster` (None: it has none)
    group: str | None
    scores: dict[str, float]


@dataclass(frozen=True)
class PairedDifference:
    metric: str
    group: str
    a: MeanEstimate  # run A's mean over the items, with its standard error
    b: MeanEstimate
    difference: float  # B - A
    ci95: tuple[float, float] | None  # None under two items
    test: str
    p_value: float

    @property
    def mean_a(self) -> float:
        return self.a.mean

    @property
    def mean_b(self) -> float:
        return self.b.mean

    @property
    def items(self) -> int:
        return self.a.items

    @property
    def rows(self) -> int:
        return self.a.rows


def row_scores(record: dict) -> dict[str, float]:
    """The headline scores a prediction record carries (see the module's docstring)."""
    scores: dict[str, float] = {}
    gold = record.get("gold")
    if isinstance(record.get("correct"), bool):
        scores["acc"] = float(record["correct"])
    elif "gold" in record and "predicted" in record:
        scores["acc"] = float(record["predicted"] == gold)
    probs = record.get("probs")
    if isinstance(gold, int) and isinstance(probs, list) and 0 <= gold < len(probs):
        scores["p_true"] = float(probs[gold])
    for name in SCORE_FIELDS:
        value = record.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            scores.setdefault(name, float(value))
    return scores


def _identity(value) -> str:
    """A field as identity compares it: text with its whitespace collapsed (one reading keeps a stray
    `\\r`)."""
    return " ".join(value.split()) if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _rows(records: list[dict], identity: Sequence[str]) -> list[Row]:
    rows = []
    for record in records:
        key = (record["index"], *(_identity(record[f]) for f in identity))
        labels = [record.get(f) for f in GROUP_FIELDS if isinstance(record.get(f), str)]
        if not labels and isinstance(record.get("gold"), str):
            labels = [record["gold"]]
        rows.append(Row(key, record.get("cluster"), next(iter(labels), None), row_scores(record)))
    return rows


def match_runs(records_a: list[dict], records_b: list[dict]) -> list[tuple[Row, Row]]:
    """The rows of two runs paired by item, in A's order; refused (ValueError) unless both hold the same
    rows."""
    both = [*records_a, *records_b]
    identity = [f for f in IDENTITY_FIELDS if all(f in r for r in both)]
    rows_a, rows_b = _rows(records_a, identity), _rows(records_b, identity)
    by_key_b = {row.key: row for row in rows_b}
    keys_a = {row.key for row in rows_a}
    only_a, only_b = len(keys_a - by_key_b.keys()), len(by_key_b.keys() - keys_a)
    repeated = len(rows_a) - len(keys_a) + len(rows_b) - len(by_key_b)
    if only_a or only_b or repeated:
        raise ValueError(
            f"the runs are not on the same items: {only_a} of A's {len(rows_a)} rows are not in B, {only_b} "
            "of "
            f"B's {len(rows_b)} not in A, {repeated} repeated (rows matched by index and "
            f"{', '.join(identity) or 'nothing else'})"
        )
    return [(row, by_key_b[row.key]) for row in rows_a]


def _unit_order(unit) -> tuple:
    """Units sorted by id (numbers as numbers, text as text, numbers first)."""
    return (isinstance(unit, str), unit)


def paired_difference(
    metric: str, group: str, a: np.ndarray, b: np.ndarray, clusters: Sequence, seed: int = 0
) -> PairedDifference:
    """B - A over rows paired by unit, with its cluster-bootstrap interval and exact paired test."""
    codes = {unit: k for k, unit in enumerate(sorted(set(clusters), key=_unit_order))}
    item = np.array([codes[c] for c in clusters])
    sums_a = np.bincount(item, weights=a, minlength=len(codes))
    sums_b = np.bincount(item, weights=b, minlength=len(codes))
    sizes = np.bincount(item, minlength=len(codes)).astype(float)
    rng = np.random.default_rng(seed)
    ci95 = None
    if len(codes) > 1:
        result = stats.bootstrap(
            (sums_b - sums_a, sizes),
            lambda d, n, axis=-1: d.sum(axis=axis) / n.sum(axis=axis),
            n_resamples=RESAMPLES,
            paired=True,
            vectorized=True,
            method="percentile",
            batch=500,
            rng=rng,
        )
        ci95 = (float(result.confidence_interval.low), float(result.confidence_interval.high))
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    test, p_value = _paired_test(a, b, sums_a, sums_b, binary and len(codes) == len(a), rng)
    estimate_a, estimate_b = estimate_mean(a, clusters), estimate_mean(b, clusters)
    return PairedDifference(
        metric, group, estimate_a, estimate_b, estimate_b.mean - estimate_a.mean, ci95, test, p_value
    )


def mcnemar_p(only_a, only_b) -> np.ndarray:
    """McNemar's exact two-sided p-value from the discordant pairs (right in A only, in B only): twice the
    binomial tail of the smaller count under p = 1/2, at most 1; 1 where no pair is discordant."""
    only_a, only_b = np.asarray(only_a), np.asarray(only_b)
    tail = stats.binom.cdf(np.minimum(only_a, only_b), only_a + only_b, 0.5)
    return np.where(only_a + only_b > 0, np.minimum(1.0, 2 * tail), 1.0)


def sign_flip_p(differences, rng: np.random.Generator, permutations: int = PERMUTATIONS) -> np.ndarray:
    """The two-sided p-value of the sign-flip test of each sample's units' summed differences (last axis):
    every sign flip where they number at most `permutations` (the identity among them: p = the share at least
    as extreme), else `permutations` random ones (p = (1 + at least as extreme) / (1 + permutations)). One set
    of flips serves every sample of a call: each sample's p-value is exact on its own."""
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))
    units = d.shape[-1]
    exact = 2**units <= permutations
    if exact:
        signs = 1 - 2 * ((np.arange(2**units)[:, None] >> np.arange(units)) & 1)
    else:
        signs = 1 - 2 * rng.integers(0, 2, (permutations, units))
    observed = np.abs(d.sum(-1, keepdims=True))
    tolerance = 1e-9 * np.maximum(np.abs(d).sum(-1, keepdims=True), 1.0)
    extreme = np.zeros(d.shape[0])
    for start in range(0, len(signs), 2_000):  # chunks of flips: memory of samples x 2,000
        flipped = np.abs(d @ signs[start : start + 2_000].T.astype(np.float64))
        extreme += np.sum(flipped >= observed - tolerance, -1)
    p = extreme / len(signs) if exact else (1 + extreme) / (1 + permutations)
    return p.reshape(np.shape(differences)[:-1])


def _paired_test(a, b, sums_a, sums_b, mcnemar: bool, rng) -> tuple[str, float]:
    if mcnemar:
        only_a, only_b = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        p_value = float(mcnemar_p(only_a, only_b))
        return f"McNemar, exact ({only_a} right in A only, {only_b} in B only)", p_value
    if np.allclose(sums_a, sums_b):
        return "sign-flip: no unit differs", 1.0
    exact = 2 ** len(sums_a) <= PERMUTATIONS
    how = "exact" if exact else f"{PERMUTATIONS:,} random flips"
    return f"sign-flip over units, {how}", float(sign_flip_p(sums_b - sums_a, rng))


def unit_of(a: Row, b: Row):
    """The unit of a pair of rows: A's record's `cluster`, else B's (a run from before units were written
    beside one that writes them), else the row's index (each row its own unit)."""
    return a.cluster if a.cluster is not None else b.cluster if b.cluster is not None else a.key[0]


def compare_records(records_a: list[dict], records_b: list[dict], seed: int = 0) -> list[PairedDifference]:
    """Every score both runs carry on every row, overall and per group (run A's groups: two runs may group the
    same items otherwise, as LUDWIG's `data.types`)."""
    pairs = match_runs(records_a, records_b)
    metrics = [m for m in pairs[0][0].scores if all(m in a.scores and m in b.scores for a, b in pairs)]
    groups = [ALL, *sorted({a.group for a, _ in pairs if a.group is not None})]
    out = []
    for metric in metrics:
        for group in groups:
            chosen = [(a, b) for a, b in pairs if group == ALL or a.group == group]
            scores_a = np.array([a.scores[metric] for a, _ in chosen])
            scores_b = np.array([b.scores[metric] for _, b in chosen])
            clusters = [unit_of(a, b) for a, b in chosen]
            out.append(paired_difference(metric, group, scores_a, scores_b, clusters, seed))
    return out
