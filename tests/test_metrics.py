"""Metrics' scores and the uncertainty each figure carries (rank, grouped means, F1, perplexity,
generation)."""

import math

import numpy as np
import pytest
import torch
from batch_rows import rows
from scipy import stats
from torchmetrics.functional.classification import multiclass_f1_score

from pragexp.generation.ranking import reciprocal_rank, target_rank
from pragexp.metrics import GroupedMeanMetric
from pragexp.metrics.bootstrap import bootstrap_f1, f1_per_class
from pragexp.metrics.classification import ClassificationMetric
from pragexp.metrics.generation import GenerationMetric
from pragexp.metrics.perplexity import PerplexityMetric
from pragexp.metrics.uncertainty import estimate_mean


def test_rank_counts_ties_against_the_gold():
    scores = torch.tensor([[0.1, 0.9, 0.3, 0.2], [1.0, 1.0, 1.0, 1.0], [0.5, 0.1, 0.2, 0.3]])
    target = torch.tensor([1, 0, 3])
    assert target_rank(scores, target).tolist() == [1, 4, 2]
    assert torch.allclose(reciprocal_rank(scores, target), torch.tensor([1.0, 0.25, 0.5]))


def test_grouped_mean_counts_each_index_once_and_splits_groups():
    metric = GroupedMeanMetric(["acc"], ["explicit", "relevance"])
    metric.update(rows(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1])), acc=torch.tensor([1.0, 0.0, 1.0]))
    # A distributed sampler pads by repeating examples: index 0 comes back, it must not count twice.
    metric.update(rows(torch.tensor([3, 0]), torch.tensor([-1, 0])), acc=torch.tensor([0.0, 1.0]))
    out = metric.compute()
    assert out["count"] == 4
    assert torch.isclose(out["acc"], torch.tensor(0.5))
    assert out["acc/explicit"] == 1.0 and out["acc/relevance"] == 0.5
    metric.reset()
    assert metric.compute() == {}


def test_grouped_mean_leaves_a_nan_score_out_of_its_means():
    metric = GroupedMeanMetric(["acc", "brier"], ["x", "y"])
    batch = rows(torch.tensor([0, 1, 2]), torch.tensor([0, 0, 1]))
    metric.update(batch, acc=torch.tensor([1.0, 0.0, 1.0]), brier=torch.tensor([0.5, math.nan, math.nan]))
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["acc"] == pytest.approx(2 / 3) and out["count"] == 3  # the other score as before
    assert out["brier"] == 0.5 and out["brier/x"] == 0.5 and out["brier_n"] == 1
    assert not any(key.startswith("brier") and key.endswith("/y") for key in out)  # no score in group y


# -- the uncertainty of every figure a table prints (issue 46) -----------------------------------------------


def classification_rows(seed=0, units=60, rows=1):
    """Three labels; gold and prediction per unit, each unit's rows alike."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, units)
    preds = np.where(rng.random(units) < 0.6, gold, rng.integers(-1, 3, units))
    return np.repeat(gold, rows), np.repeat(preds, rows), np.repeat(np.arange(units), rows)


def f1_out(gold, preds, cluster=None, order=None, batches=1):
    metric = ClassificationMetric(["a", "b", "c"], no_answer=True)
    order = np.arange(len(gold)) if order is None else order
    for part in np.array_split(order, batches):
        metric.update(
            rows(
                torch.tensor(part),
                label=torch.tensor(gold[part]),
                cluster=None if cluster is None else torch.tensor(cluster[part]),
            ),
            torch.tensor(preds[part]),
        )
    return {k: float(v) for k, v in metric.compute().items()}


def test_f1_from_counts_is_torchmetrics_f1():
    gold, preds, _ = classification_rows(1, 200)
    answers = np.where(preds >= 0, preds, 3)
    confusion = np.zeros((4, 4))
    np.add.at(confusion, (gold, answers), 1)
    expected = multiclass_f1_score(
        torch.tensor(answers), torch.tensor(gold), 4, average=None, zero_division=0
    )
    assert f1_per_class(confusion) == pytest.approx(expected.numpy())


def test_classification_f1_carries_its_bootstrap_figures():
    gold, preds, _ = classification_rows(2, 80)
    out = f1_out(gold, preds)
    for key in ("macro_f1", "f1/a", "f1/b", "f1/c"):
        name, _, slug = key.partition("/")
        suffix = f"/{slug}" if slug else ""
        low, high = out[f"{name}_ci95_low{suffix}"], out[f"{name}_ci95_high{suffix}"]
        assert low < out[key] < high and 0 < out[f"{name}_stderr{suffix}"] < high - low
        assert (out[f"{name}_n{suffix}"], out[f"{name}_rows{suffix}"]) == (80.0, 80.0)
    # about the size the delta method gives a share of 80: an F1 of ~0.6 has an SE of ~0.05-0.1
    assert 0.03 < out["macro_f1_stderr"] < 0.12


def test_f1_figures_depend_on_no_row_order_nor_batches_nor_padding():
    gold, preds, units = classification_rows(3, 50, rows=3)
    first = f1_out(gold, preds, units)
    shuffled = np.random.default_rng(9).permutation(len(gold))
    assert f1_out(gold, preds, units, order=shuffled, batches=4) == first
    padded = np.concatenate([np.arange(len(gold)), [0, 1, 2]])  # a distributed sampler repeats examples
    assert f1_out(gold, preds, units, order=padded, batches=3) == first


def test_the_f1_bootstrap_resamples_units_not_rows():
    # Each unit's four rows are identical. A cluster bootstrap sees 40 units: the same figures as one row per
    # unit (F1 is the same on counts four times as large). A row bootstrap would see 160 independent rows and
    # give an error about half as large: so does this metric where told every row is its own unit.
    gold, preds, _ = classification_rows(4, 40)
    one_row = f1_out(gold, preds)
    gold4, preds4, units4 = classification_rows(4, 40, rows=4)
    by_unit = f1_out(gold4, preds4, units4)
    for key in ("macro_f1_stderr", "macro_f1_ci95_low", "f1_stderr/a", "f1_ci95_high/c"):
        assert by_unit[key] == pytest.approx(one_row[key])
    by_row = f1_out(gold4, preds4)
    assert by_row["macro_f1_stderr"] < 0.6 * by_unit["macro_f1_stderr"]
    assert (by_unit["macro_f1_n"], by_unit["macro_f1_rows"], by_row["macro_f1_n"]) == (40.0, 160.0, 160.0)


def test_f1_bootstrap_under_two_units_has_no_interval():
    assert bootstrap_f1([5, 5, 5], [0, 1, 0], [0, 1, 1], 2) is None
    metric = ClassificationMetric(["a", "b"])
    metric.update(
        rows(torch.arange(3), label=torch.tensor([0, 1, 1]), cluster=torch.tensor([7, 7, 7])),
        torch.tensor([0, 1, 0]),
    )
    out = metric.compute()
    assert out["macro_f1_n"] == 1 and "macro_f1_stderr" not in out and "acc_stderr" not in out


def test_accuracy_and_no_answer_are_clustered_by_the_unit():
    gold, preds, units = classification_rows(5, 30, rows=4)
    out = f1_out(gold, preds, units)
    expected = estimate_mean((preds == gold).astype(float), units)
    assert out["acc_stderr"] == pytest.approx(expected.stderr, rel=1e-6) and out["acc_n"] == 30.0
    assert out["no_answer_stderr"] == pytest.approx(estimate_mean((preds < 0).astype(float), units).stderr)


def test_perplexity_carries_its_clustered_interval():
    # Three conversations: NLL 2 + 4 over 4 tokens, 3 over 3, 1 over 1 (tests/test_intervals.py by hand).
    metric = PerplexityMetric()
    metric.update(
        rows(torch.tensor([0, 1, 2]), cluster=torch.tensor([0, 0, 1])),
        torch.tensor([2.0, 4.0, 3.0]),
        torch.tensor([2, 2, 3]),
    )
    metric.update(
        rows(torch.tensor([3, 0]), cluster=torch.tensor([2, 0])),
        torch.tensor([1.0, 2.0]),
        torch.tensor([1, 2]),
    )  # a repeat
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["ppl"] == pytest.approx(math.exp(1.25), rel=1e-6)
    assert (out["ppl_n"], out["ppl_rows"]) == (3.0, 4.0)
    log_se = math.sqrt((2 + 0.9 + 0.0625 / 0.875) / 64)
    assert out["ppl_stderr"] == pytest.approx(math.exp(1.25) * log_se, rel=1e-5)
    assert out["ppl_ci95_low"] < out["ppl"] < out["ppl_ci95_high"]
    assert math.log(out["ppl_ci95_high"]) - 1.25 == pytest.approx(
        1.25 - math.log(out["ppl_ci95_low"]), rel=1e-5
    )
    # every example its own unit: four units, another error
    plain = PerplexityMetric()
    plain.update(rows(torch.arange(4)), torch.tensor([2.0, 4.0, 3.0, 1.0]), torch.tensor([2, 2, 3, 1]))
    plain_out = {k: float(v) for k, v in plain.compute().items()}
    assert plain_out["ppl_n"] == 4.0 and plain_out["ppl_stderr"] != pytest.approx(out["ppl_stderr"])


def test_generation_figures_are_clustered_means():
    records = {
        i: {"unparsed": float(i % 3 == 0), "reasoning_tokens": 10 * i, "forced": i == 4} for i in range(8)
    }
    units = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    metric = GenerationMetric()
    metric.update({i: records[i] for i in range(5)}, torch.arange(5), units[:5])
    metric.update({i: records[i] for i in range(5, 8)}, torch.arange(5, 8), units[5:])
    out = {k: float(v) for k, v in metric.compute().items()}
    unparsed = [records[i]["unparsed"] for i in range(8)]
    expected = estimate_mean(unparsed, units.tolist())
    assert out["unparsed_stderr"] == pytest.approx(expected.stderr, rel=1e-6) and out["unparsed_n"] == 4.0
    assert (out["unparsed_ci95_low"], out["unparsed_ci95_high"]) == pytest.approx(expected.ci95, rel=1e-5)
    tokens = estimate_mean([10.0 * i for i in range(8)], units.tolist(), share=False)
    half = stats.t.ppf(0.975, 3) * tokens.stderr
    assert out["reasoning_tokens_ci95_high"] == pytest.approx(35 + half, rel=1e-5)
    assert out["forced_n"] == 4.0 and "extracted" not in out


def test_generation_tokens_all_zero_are_no_share():
    metric = GenerationMetric()
    metric.update({i: {"unparsed": False, "reasoning_tokens": 0} for i in range(6)})  # no units: each its own
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["reasoning_tokens_n"] == 6.0
    assert (out["reasoning_tokens_ci95_low"], out["reasoning_tokens_ci95_high"]) == (0.0, 0.0)
    assert out["unparsed_ci95_high"] > 0  # a share never seen is not shown as surely 0
