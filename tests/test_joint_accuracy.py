"""Accuracy over sets of examples right only together (pragexp.metrics.joint): BigToM's true-and-false-belief figure,
as the authors' `get_contingency(..., "true_and_false")` computes it, per group and with its clustered uncertainty."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pragexp.metrics.joint import JointMetric
from pragexp.metrics.uncertainty import estimate_mean

GROUPS = ["forward_belief", "true_belief", "false_belief"]


def membership(rows) -> torch.Tensor:
    return torch.tensor([[g in row for g in GROUPS] for row in rows])


def test_a_set_is_right_only_when_all_its_examples_are_as_the_authors_pair_them():
    # Four stories; the authors pair the true-belief rows with the false-belief rows by position and take both.
    true_belief, false_belief = [1, 1, 0, 1], [1, 0, 0, 1]
    authors = np.logical_and(np.array(true_belief, bool), np.array(false_belief, bool)).mean()
    metric = JointMetric(GROUPS)
    # Given in two updates, the false-belief rows first and out of order: a set's rows need not share a batch.
    metric.update(
        torch.tensor([7, 6, 5, 4]),
        torch.tensor([3, 2, 1, 0]),
        torch.tensor(false_belief[::-1], dtype=torch.float),
        membership([("forward_belief", "false_belief")] * 4),
        torch.tensor([3, 2, 1, 0]),
    )
    metric.update(
        torch.arange(4),
        torch.arange(4),
        torch.tensor(true_belief, dtype=torch.float),
        membership([("forward_belief", "true_belief")] * 4),
        torch.arange(4),
    )
    out = metric.compute()
    assert float(out["joint_acc"]) == pytest.approx(authors) == 0.5
    # The group both rows of a set are in carries the figure; the groups of one row alone do not.
    assert float(out["joint_acc/forward_belief"]) == 0.5
    assert "joint_acc/true_belief" not in out and "joint_acc/false_belief" not in out
    expected = estimate_mean([1.0, 0.0, 0.0, 1.0], [0, 1, 2, 3])
    assert float(out["joint_acc_stderr"]) == pytest.approx(expected.stderr)
    assert float(out["joint_acc_n"]) == 4 and float(out["joint_acc_rows"]) == 4
    assert float(out["joint_acc_stderr/forward_belief"]) == pytest.approx(expected.stderr)


def test_sets_of_one_story_are_clustered_by_it_and_a_repeated_index_counts_once():
    metric = JointMetric(GROUPS)
    # Two stories, two sets each (say forward and backward belief); index 3 comes twice (DDP padding).
    index = torch.tensor([0, 1, 2, 3, 3, 4, 5, 6, 7])
    sets = torch.tensor([0, 0, 1, 1, 1, 2, 2, 3, 3])
    correct = torch.tensor([1, 1, 1, 0, 1, 0, 1, 1, 1], dtype=torch.float)
    clusters = torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1])
    metric.update(index, sets, correct, membership([()] * 9), clusters)
    out = metric.compute()
    # Set 1's second row is the first record of index 3 (wrong): sets right 1, 0, 0, 1.
    assert float(out["joint_acc"]) == 0.5
    expected = estimate_mean([1.0, 0.0, 0.0, 1.0], [0, 0, 1, 1])
    assert float(out["joint_acc_n"]) == 2 and float(out["joint_acc_rows"]) == 4
    assert float(out["joint_acc_stderr"]) == pytest.approx(expected.stderr)


def test_no_sets_no_figures_and_a_set_across_units_is_refused():
    assert JointMetric([]).compute() == {}  # a benchmark without groups whose examples form no sets
    metric = JointMetric(GROUPS)
    metric.update(torch.arange(2), torch.tensor([-1, -1]), torch.ones(2), membership([()] * 2))
    assert metric.compute() == {}
    metric.reset()
    metric.update(
        torch.arange(2), torch.tensor([5, 5]), torch.ones(2), membership([()] * 2), torch.tensor([0, 1])
    )
    with pytest.raises(ValueError, match="joint set 5 holds examples of different clusters"):
        metric.compute()
