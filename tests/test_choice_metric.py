"""The choice metric every LLM choice benchmark reports (`pragexp.metrics.choice`): ties read by the
protocol's rule, views, kinds and the correlation with people (Pearson's r across items, as Hu et al.
compute it), an example in several groups and the share of each position chosen."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from batch_rows import choice_rows

from pragexp.generation.ranking import right_under
from pragexp.metrics.choice import ChoiceMetric, pearson
from pragexp.metrics.uncertainty import estimate_mean


def test_ties_are_read_by_the_protocol_s_rule():
    inf = float("inf")
    scores = torch.tensor(
        [[-1.0, -1.0, -3.0], [-2.0, -1.0, -1.0], [-0.5, -2.0, -9.0], [-1.0, -inf, -inf], [-inf, -inf, -inf]]
    )
    # exact ties: row 0 between options 0 and 1, row 1 between 1 and 2; no finite score in the last row
    labels_first, labels_second = torch.tensor([0, 1, 0, 0, 0]), torch.tensor([1, 2, 1, 1, 1])
    assert right_under(scores, labels_first, "first").tolist() == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert right_under(scores, labels_second, "first").tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    assert right_under(scores, labels_first, "wrong").tolist() == [0.0, 0.0, 1.0, 1.0, 0.0]
    assert right_under(scores, labels_second, "wrong").tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]
    # the first rule is numpy's argmax, Hu et al.'s
    finite = scores[:4].numpy()
    assert right_under(scores[:4], labels_first[:4]).tolist() == [
        float(np.argmax(row) == label) for row, label in zip(finite, labels_first[:4].tolist(), strict=True)
    ]
    with pytest.raises(ValueError, match="ties='never'"):
        right_under(scores, labels_first, "never")


def test_choice_metric_views_kinds_and_correlation():
    metric = ChoiceMetric(["a", "b"], ["seed0", "seed1"], ["literal", "associate"])
    # four items in two views; view 0 gets 2/2 right, view 1 1/2: spread = population std of (1.0, 0.5) = 0.25
    metric.update(
        *choice_rows(
            torch.tensor([0, 1, 2, 3, 3]),  # index 3 twice (a DDP pad): counted once
            torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0]),
            torch.tensor([0.9, 0.6, 0.7, 0.2, 0.2]),
            group=torch.tensor([0, 1, 0, 1, 1]),
            view=torch.tensor([0, 0, 1, 1, 1]),
            kind=torch.tensor([-1, -1, -1, 1, 1]),
            corr=torch.tensor([1.0, float("nan"), 0.5, -0.5, -0.5]),
        )
    )
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["count"] == 4 and out["acc"] == 0.75 and out["acc/b"] == 0.5
    assert out["acc_view/seed0"] == 1.0 and out["acc_view/seed1"] == 0.5 and out["acc_view_std"] == 0.25
    assert out["error_share/associate"] == 1.0 and out["error_share/literal"] == 0.0
    assert (
        out["error_share/associate/b"] == 1.0 and "error_share/literal/b" not in out
    )  # a group's chosen kinds
    assert out["human_option_corr"] == pytest.approx((1.0 + 0.5 - 0.5) / 3)
    assert out["human_option_corr_items"] == 3 and "human_corr" not in out  # no people's proportions given
    assert math.isnan(pearson([0.5, 0.5], [0.2, 0.8])) and pearson([0, 1, 2], [1, 3, 5]) == pytest.approx(1.0)


def test_the_comparison_with_people_is_pearson_s_r_across_items_as_hu_et_al_compute_it():
    """Four items of phenomenon a in two seeds, the model's p_true per item (mean over its seeds) 0.2, 0.4,
    0.6, 0.8 against people's 0.5, 0.7, 0.6, 0.9: r = Sxy / sqrt(Sxx Syy) = 0.11 / sqrt(0.2 * 0.0875); with
    four items (two degrees of freedom) the two-sided p-value of r is exactly 1 - |r|. A fifth item people did
    not answer is left out; phenomenon b has two items: no r."""
    nan = float("nan")
    metric = ChoiceMetric(["a", "b"], ["seed0", "seed1"])
    p_true = [0.1, 0.3, 0.4, 0.4, 0.5, 0.7, 0.8, 0.8, 0.9, 0.3, 0.6]
    people = [0.5, 0.5, 0.7, 0.7, 0.6, 0.6, 0.9, 0.9, nan, 0.2, 0.4]
    items = [0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 6]
    metric.update(
        *choice_rows(
            torch.arange(11),
            torch.ones(11),
            torch.tensor(p_true),
            group=torch.tensor([0] * 9 + [1, 1]),
            view=torch.tensor([0, 1] * 4 + [0, 0, 0]),
            kind=torch.full((11,), -1),
            corr=torch.full((11,), nan),
            cluster=torch.tensor(items),
            people_correct=torch.tensor(people),
        )
    )
    out = {k: float(v) for k, v in metric.compute().items()}
    r = 0.11 / math.sqrt(0.2 * 0.0875)
    assert out["human_corr/a"] == pytest.approx(r, abs=1e-6) and out["human_corr_p/a"] == pytest.approx(
        1 - r, abs=1e-6
    )
    assert out["human_corr_items/a"] == 4 and out["human_corr_ci95_low/a"] < r < out["human_corr_ci95_high/a"]
    assert not any(key.endswith("/b") and key.startswith("human_corr") for key in out)
    assert out["human_corr_items"] == 6  # every answered item of both phenomena


def test_choice_metric_an_example_in_several_groups_and_the_share_of_each_position_chosen():
    metric = ChoiceMetric(["en", "de", "maxims", "en:maxims"], position_names=["A", "B", "C"])
    # rows 0-1 English (0 a maxim), rows 2-3 German (2 a maxim); row 3 named no option
    metric.update(
        *choice_rows(
            torch.arange(4),
            torch.tensor([1.0, 0.0, 0.0, 0.0]),
            torch.tensor([1.0, 0.0, 0.0, 0.0]),
            group=torch.tensor([0, 0, 1, 1]),
            view=torch.full((4,), -1),
            kind=torch.full((4,), -1),
            corr=torch.full((4,), float("nan")),
            predicted=torch.tensor([0, 0, 2, -1]),
            groups=[[0, 2, 3], [0], [1, 2], [1]],  # every group each row is in
        )
    )
    out = {k: float(v) for k, v in metric.compute().items()}
    assert (
        out["acc/en"] == 0.5
        and out["acc/de"] == 0.0
        and out["acc/maxims"] == 0.5
        and out["acc/en:maxims"] == 1
    )
    assert out["acc_n/maxims"] == 2 and out["acc_stderr/maxims"] == pytest.approx(
        estimate_mean([1, 0]).stderr
    )
    assert out["acc_n/en:maxims"] == 1 and "acc_stderr/en:maxims" not in out  # one item: no standard error
    assert out["acc_n"] == 4 and out["acc_stderr"] == pytest.approx(estimate_mean([1, 0, 0, 0]).stderr)
    assert (out["chosen/A"], out["chosen/B"], out["chosen/C"], out["chosen/none"]) == (0.5, 0.0, 0.25, 0.25)


# -- LUDWIG --------------------------------------------------------------------------------------------------
