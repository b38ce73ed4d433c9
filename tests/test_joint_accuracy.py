"""Accuracy over sets of examples right only together (pragexp.metrics.item_sets): BigToM's
true-and-false-belief figure as the authors' `get_contingency(..., "true_and_false")` computes it, with its
clustered uncertainty."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from batch_rows import choice_rows

from pragexp.metrics.item_sets import ItemSetMetric
from pragexp.metrics.uncertainty import estimate_mean


def test_a_set_is_right_only_when_all_its_examples_are_as_the_authors_pair_them():
    # Four stories; the authors pair the true-belief rows with the false-belief rows by position and take
    # both.
    true_belief, false_belief = [1, 1, 0, 1], [1, 0, 0, 1]
    authors = np.logical_and(np.array(true_belief, bool), np.array(false_belief, bool)).mean()
    pairs = [[story, 4 + story] for story in range(4)]  # examples 0-3 true belief, 4-7 false belief
    metric = ItemSetMetric({"all": pairs})
    # Given in two updates, the false-belief rows first and out of order: a set's rows need not share a batch.
    for index, right in ((torch.tensor([7, 6, 5, 4]), false_belief[::-1]), (torch.arange(4), true_belief)):
        stories = index % 4
        metric.update(
            *choice_rows(
                index, torch.tensor(right), predicted=torch.zeros(4), label=torch.zeros(4), cluster=stories
            )
        )
    out = metric.compute()
    assert float(out["joint_acc/all"]) == pytest.approx(authors) == 0.5
    expected = estimate_mean([1.0, 0.0, 0.0, 1.0], [0, 1, 2, 3])
    assert float(out["joint_acc_stderr/all"]) == pytest.approx(expected.stderr)
    assert float(out["joint_acc_n/all"]) == 4 and float(out["joint_acc_rows/all"]) == 4


def test_sets_of_one_story_are_clustered_by_it_and_a_repeated_index_counts_once():
    # Two stories, two sets each (say forward and backward belief); index 3 comes twice (DDP padding).
    metric = ItemSetMetric({"all": [[0, 1], [2, 3], [4, 5], [6, 7]]})
    index = torch.tensor([0, 1, 2, 3, 3, 4, 5, 6, 7])
    correct = torch.tensor([1, 1, 1, 0, 1, 0, 1, 1, 1], dtype=torch.float)
    stories = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1])
    metric.update(
        *choice_rows(index, correct, predicted=torch.zeros(9), label=torch.zeros(9), cluster=stories)
    )
    out = metric.compute()
    # Set [2, 3]'s second row is the first record of index 3 (wrong): sets right 1, 0, 0, 1.
    assert float(out["joint_acc/all"]) == 0.5
    expected = estimate_mean([1.0, 0.0, 0.0, 1.0], [0, 0, 1, 1])
    assert float(out["joint_acc_n/all"]) == 2 and float(out["joint_acc_rows/all"]) == 4
    assert float(out["joint_acc_stderr/all"]) == pytest.approx(expected.stderr)


def test_no_sets_no_figures_and_a_set_across_units_is_refused():
    assert ItemSetMetric().compute() == {}
    metric = ItemSetMetric({"all": [[0, 1]]})
    metric.update(
        *choice_rows(
            torch.arange(2),
            torch.ones(2),
            predicted=torch.zeros(2),
            label=torch.zeros(2),
            cluster=torch.tensor([0, 1]),
        )
    )
    with pytest.raises(ValueError, match="holds examples of different sampling units"):
        metric.compute()
