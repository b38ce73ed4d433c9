"""Two runs on the same items, compared item by item (`python -m pragexp.report.compare RUN_A RUN_B`).

Reads each run's `predictions.jsonl` (a run directory or the file itself) and matches the rows by their dataset
`index` and what describes the example in both runs (gold answer, item, text with its whitespace collapsed:
`IDENTITY_FIELDS`); runs whose rows do not all match are refused, naming how many differ. The groups are run A's
(two runs may group the same items otherwise: LUDWIG's `data.types`). Per headline score a row carries (`acc`: right
or wrong, from `correct` or gold against predicted, R@1 for GRICE recovery; `p_true`, from the option
probabilities; the scores a task writes per row: an intention task's `acc`, PragmatiCQA's `f1_lit`, `f1_prag`, ...),
overall and per group (the row's `group`, `phenomenon`, or else its gold label), it prints both runs' means, the
difference B - A with a paired bootstrap 95% interval and an exact paired test:

- interval: the percentile interval of the difference of means over `RESAMPLES` resamples of the items, each
  item with all its rows (a cluster bootstrap: Hu et al.'s option orders of one item travel together), drawn by
  `scipy.stats.bootstrap` from `numpy.random.default_rng(seed)`: the same command prints the same interval;
- test: for right/wrong with one row per item, McNemar's exact test (a binomial test of the discordant pairs,
  `scipy.stats.binomtest`); otherwise a sign-flip permutation test of the item's summed differences
  (`scipy.stats.permutation_test`, permutation_type="samples": A and B swap within an item), exact where the
  2^items sign flips number at most `PERMUTATIONS`, else that many random flips from the same seeded generator.
  (With one row per item and right/wrong scores the two tests are the same test.)

An item is the row's `cluster` where the task writes one (the item a row scores), else its index.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from pragexp.metrics.uncertainty import format_estimate

PREDICTIONS = "predictions.jsonl"
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
    cluster: object
    group: str | None
    scores: dict[str, float]


@dataclass(frozen=True)
class PairedDifference:
    metric: str
    group: str
    mean_a: float
    mean_b: float
    difference: float  # B - A
    ci95: tuple[float, float] | None  # None under two items
    test: str
    p_value: float
    items: int
    rows: int


def read_predictions(run: str | Path) -> list[dict]:
    """A run's prediction records (a run directory or its predictions.jsonl), each holding its `index`."""
    path = Path(run)
    path = path / PREDICTIONS if path.is_dir() else path
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (a run directory holding {PREDICTIONS}, or the file)")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}, line {number}: not JSON ({error.msg})") from None
        if not isinstance(record, dict) or "index" not in record:
            raise ValueError(f"{path}, line {number}: a prediction record needs the field 'index'")
        records.append(record)
    return records


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
    """A field as identity compares it: text with its whitespace collapsed (one reading keeps a stray `\\r`)."""
    return " ".join(value.split()) if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _rows(records: list[dict], identity: Sequence[str]) -> list[Row]:
    rows = []
    for record in records:
        key = (record["index"], *(_identity(record[f]) for f in identity))
        labels = [record.get(f) for f in GROUP_FIELDS if isinstance(record.get(f), str)]
        if not labels and isinstance(record.get("gold"), str):
            labels = [record["gold"]]
        rows.append(
            Row(key, record.get("cluster", record["index"]), next(iter(labels), None), row_scores(record))
        )
    return rows


def match_runs(records_a: list[dict], records_b: list[dict]) -> list[tuple[Row, Row]]:
    """The rows of two runs paired by item, in A's order; refused (ValueError) unless both hold the same rows."""
    both = [*records_a, *records_b]
    identity = [f for f in IDENTITY_FIELDS if all(f in r for r in both)]
    rows_a, rows_b = _rows(records_a, identity), _rows(records_b, identity)
    by_key_b = {row.key: row for row in rows_b}
    keys_a = {row.key for row in rows_a}
    only_a, only_b = len(keys_a - by_key_b.keys()), len(by_key_b.keys() - keys_a)
    repeated = len(rows_a) - len(keys_a) + len(rows_b) - len(by_key_b)
    if only_a or only_b or repeated:
        raise ValueError(
            f"the runs are not on the same items: {only_a} of A's {len(rows_a)} rows are not in B, {only_b} of "
            f"B's {len(rows_b)} not in A, {repeated} repeated (rows matched by index and "
            f"{', '.join(identity) or 'nothing else'})"
        )
    return [(row, by_key_b[row.key]) for row in rows_a]


def paired_difference(
    metric: str, group: str, a: np.ndarray, b: np.ndarray, clusters: Sequence, seed: int = 0
) -> PairedDifference:
    """B - A over rows paired by item, with its cluster-bootstrap interval and exact paired test."""
    codes: dict = {}
    item = np.array([codes.setdefault(c, len(codes)) for c in clusters])
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
    mean_a, mean_b = float(a.mean()), float(b.mean())
    return PairedDifference(
        metric, group, mean_a, mean_b, mean_b - mean_a, ci95, test, p_value, len(codes), len(a)
    )


def _paired_test(a, b, sums_a, sums_b, mcnemar: bool, rng) -> tuple[str, float]:
    if mcnemar:
        only_a, only_b = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
        discordant = only_a + only_b
        p_value = stats.binomtest(only_b, discordant, 0.5).pvalue if discordant else 1.0
        return f"McNemar, exact ({only_a} right in A only, {only_b} in B only)", float(p_value)
    if np.allclose(sums_a, sums_b):
        return "sign-flip: no item differs", 1.0
    exact = 2 ** len(sums_a) <= PERMUTATIONS
    result = stats.permutation_test(
        (sums_b, sums_a),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=PERMUTATIONS,
        vectorized=True,
        batch=500,
        rng=rng,
    )
    how = "exact" if exact else f"{PERMUTATIONS:,} random flips"
    return f"sign-flip over items, {how}", float(result.pvalue)


def compare_runs(run_a: str | Path, run_b: str | Path, seed: int = 0) -> list[PairedDifference]:
    """Every headline score both runs carry on every row, overall and per group (see the module's docstring)."""
    pairs = match_runs(read_predictions(run_a), read_predictions(run_b))
    if not pairs:
        raise ValueError(f"{run_a} and {run_b} hold no prediction records")
    metrics = [m for m in pairs[0][0].scores if all(m in a.scores and m in b.scores for a, b in pairs)]
    groups = [ALL, *sorted({a.group for a, _ in pairs if a.group is not None})]
    out = []
    for metric in metrics:
        for group in groups:
            chosen = [(a, b) for a, b in pairs if group == ALL or a.group == group]
            scores_a = np.array([a.scores[metric] for a, _ in chosen])
            scores_b = np.array([b.scores[metric] for _, b in chosen])
            clusters = [a.cluster for a, _ in chosen]
            out.append(paired_difference(metric, group, scores_a, scores_b, clusters, seed))
    return out


def format_comparison(differences: Sequence[PairedDifference], run_a: str, run_b: str) -> str:
    """A markdown table of the differences, with what A and B are."""
    lines = [
        f"A: {run_a}",
        f"B: {run_b}",
        "",
        "| metric | group | A | B | B - A | 95% CI (paired bootstrap) | test | p | items (rows) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for d in differences:
        ci = f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]" if d.ci95 else "-"
        cells = [
            d.metric,
            d.group,
            format_estimate(d.mean_a),
            format_estimate(d.mean_b),
            f"{d.difference:+.3f}",
        ]
        cells += [ci, d.test, f"{d.p_value:.4g}", f"{d.items} ({d.rows})"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pragexp.report compare", description=__doc__.split("\n")[0]
    )
    parser.add_argument("run_a", help=f"a run directory holding {PREDICTIONS}, or the file")
    parser.add_argument("run_b", help="the other run, on the same items")
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap and the random sign flips")
    args = parser.parse_args(argv)
    try:
        differences = compare_runs(args.run_a, args.run_b, args.seed)
    except (OSError, ValueError) as error:
        parser.exit(2, f"compare: {error}\n")
    print(format_comparison(differences, args.run_a, args.run_b), end="")


if __name__ == "__main__":
    main()
