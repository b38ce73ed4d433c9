"""Figures of sets of examples a data module declares (`pragexp.metrics.item_sets`, read by the choice task):
Hi-ToM's joint accuracy (a set right only when all its examples are) and OpenToM's macro-F1 (scikit-learn's,
over the answered examples and the classes among their labels), per batch and over the batches, exact under
repeats."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from batch_rows import choice_rows

from pragexp.metrics.item_sets import ItemSetMetric, authors_macro_f1
from pragexp.metrics.uncertainty import estimate_mean

# the authors' own call (OpenToM's src/evaluate.py); scikit-learn comes with the dev extras
# (sentence-transformers)
f1_score = pytest.importorskip("sklearn.metrics").f1_score


def test_a_joint_set_is_right_only_when_all_its_examples_are():
    # two stories (clusters 0 and 1), three orders each; story 0 wrong at order 1, story 1 all right
    correct = torch.tensor([1, 0, 1, 1, 1, 1])
    sets = {f"order_{k}": [[0, 1, 2][: k + 1], [3, 4, 5][: k + 1]] for k in range(3)}
    metric = ItemSetMetric(joint_sets=sets)
    metric.update(
        *choice_rows(
            torch.arange(6),
            correct,
            predicted=torch.zeros(6),
            label=torch.zeros(6),
            cluster=torch.tensor([0, 0, 0, 1, 1, 1]),
        )
    )
    out = metric.compute()
    assert [float(out[f"joint_acc/order_{k}"]) for k in range(3)] == [1.0, 0.5, 0.5]
    # one value per set, clustered by its story: two stories, two rows
    assert out["joint_acc_n/order_1"] == 2 and out["joint_acc_rows/order_1"] == 2
    assert float(out["joint_acc_stderr/order_1"]) == pytest.approx(estimate_mean([0.0, 1.0]).stderr)
    assert float(out["joint_acc_stderr/order_0"]) == 0.0  # both stories right at order 0


def test_a_set_with_an_unscored_example_is_left_out_and_repeats_count_once():
    metric = ItemSetMetric(joint_sets={"pair": [[0, 1], [2, 3]]})
    metric.update(
        *choice_rows(
            torch.tensor([0, 1, 1]),
            torch.tensor([1, 1, 1]),
            predicted=torch.zeros(3),
            label=torch.zeros(3),
            cluster=torch.zeros(3),
        )
    )
    out = metric.compute()  # example 1 twice (a padded DDP shard), examples 2 and 3 never
    assert float(out["joint_acc/pair"]) == 1.0 and out["joint_acc_n/pair"] == 1


def sklearn_f1(gold, chosen) -> float:
    """Their evaluate.py: the answered examples (chosen != -1), sklearn's macro F1 over the classes
    present."""
    kept = [(g, c) for g, c in zip(gold, chosen, strict=True) if c != -1]
    return f1_score([g for g, _ in kept], [c for _, c in kept], average="macro")


@pytest.mark.parametrize(
    ("gold", "chosen"),
    [
        ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]),
        ([0, 1, 2, 2, 1, 0], [0, 2, 2, -1, 1, 1]),  # one unanswered: left out
        ([0, 0, 1, 1], [0, 2, 1, 1]),  # a class chosen that no gold has: a class with F1 0
        ([2, 2, 1], [2, 2, 1]),  # class 0 nowhere: no class
    ],
)
def test_the_macro_f1_is_the_authors_scikit_learn_figure(gold, chosen):
    got = authors_macro_f1(torch.tensor(chosen), torch.tensor(gold), torch.arange(len(gold)))["macro_f1"]
    assert float(got) == pytest.approx(sklearn_f1(gold, chosen))


def test_macro_f1_over_batches_their_mean_and_population_std_and_the_unparsed_share():
    gold = [0, 1, 1, 0, 1, 0, 2, 2, 1, 0]
    chosen = [0, 1, 0, 0, -1, 0, 2, 1, 1, 1]
    batches = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    metric = ItemSetMetric(f1_sets={"genre": batches})
    metric.update(
        *choice_rows(
            torch.arange(10),
            torch.zeros(10),
            predicted=torch.tensor(chosen),
            label=torch.tensor(gold),
            cluster=torch.arange(10),
        )
    )
    out = metric.compute()
    per_batch = [sklearn_f1([gold[i] for i in b], [chosen[i] for i in b]) for b in batches]
    assert float(out["macro_f1/genre"]) == pytest.approx(sklearn_f1(gold, chosen))
    assert float(out["macro_f1_batch_mean/genre"]) == pytest.approx(np.mean(per_batch))
    assert float(out["macro_f1_batch_sd/genre"]) == pytest.approx(np.std(per_batch))  # ddof 0, as theirs
    assert out["macro_f1_batches/genre"] == 2 and float(out["unparsed/genre"]) == pytest.approx(0.1)


def test_nothing_answered_gives_no_f1():
    metric = ItemSetMetric(f1_sets={"genre": [[0, 1]]})
    metric.update(
        *choice_rows(
            torch.arange(2),
            torch.zeros(2),
            predicted=torch.tensor([-1, -1]),
            label=torch.tensor([0, 1]),
            cluster=torch.arange(2),
        )
    )
    out = metric.compute()
    assert "macro_f1/genre" not in out and float(out["unparsed/genre"]) == 1.0
