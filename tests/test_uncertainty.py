"""The standard error of a mean over items, plain and clustered by item, against its closed form on small
fixtures computed by hand (pragexp/metrics/uncertainty.py)."""

import math

import pytest
from scipy import stats

from pragexp.metrics.uncertainty import (
    estimate_mean,
    format_estimate,
    is_uncertainty_key,
    metrics_cell,
    uncertainty_figures,
)

# Six rows in three items of unequal sizes: a holds 3 rows, b 2, c 1.
SCORES = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
ITEMS = ["a", "a", "a", "b", "b", "c"]


def wilson(share, n, q):
    """Wilson's score interval, written out as the textbooks do."""
    centre = (share + q * q / (2 * n)) / (1 + q * q / n)
    half = q / (1 + q * q / n) * math.sqrt(share * (1 - share) / n + q * q / (4 * n * n))
    return centre - half, centre + half


def test_plain_standard_error_is_the_sample_deviation_over_root_n():
    # mean 0.5; squared deviations 6 * 0.25 = 1.5; sample variance 1.5 / 5 = 0.3; SE = sqrt(0.3 / 6)
    estimate = estimate_mean(SCORES)
    assert estimate.mean == 0.5
    assert estimate.stderr == pytest.approx(math.sqrt(0.05))
    assert (estimate.items, estimate.rows) == (6, 6)
    # Right/wrong: Wilson's interval on n* = N / deff, deff = SE² N / (p (1 - p)) = 0.05 * 6 / 0.25 = 1.2 (the
    # sample variance's N / (N - 1)), so n* = 5, with Student's t on 5 degrees of freedom.
    assert estimate.ci95 == pytest.approx(wilson(0.5, 5, 2.570581835636314))


def test_a_graded_score_has_the_wald_interval():
    graded = [0.9, 0.2, 0.6, 0.7, 0.1, 0.5]  # mean 0.5; deviations .4 -.3 .1 .2 -.4 0: squares sum 0.46
    estimate = estimate_mean(graded)
    assert estimate.stderr == pytest.approx(math.sqrt(0.46 / 5 / 6))
    half = 2.570581835636314 * estimate.stderr  # Student's t, 0.975, 5 degrees of freedom
    assert estimate.ci95 == pytest.approx((0.5 - half, 0.5 + half))
    # The same scores declared a share take Wilson's; right/wrong declared no share take the Wald interval.
    assert estimate_mean(graded, share=True).ci95 != pytest.approx(estimate.ci95)
    plain = estimate_mean(SCORES, share=False)
    assert plain.ci95 == pytest.approx(
        (0.5 - 2.570581835636314 * math.sqrt(0.05), 0.5 + 2.570581835636314 * math.sqrt(0.05))
    )


def test_clustered_standard_error_of_unequal_clusters():
    # deviations from 0.5 summed per item: a 0.5 - 0.5 + 0.5 = 0.5, b 0.5 - 0.5 = 0, c -0.5; the items' shares
    # of the rows h = 3/6, 2/6, 1/6. CR2: Var = (0.25 / (1 - 1/2) + 0 + 0.25 / (1 - 1/6)) / 36 = (0.5 + 0.3) /
    # 36 (CR1 would give 3/2 * 0.5 / 36: the factor C / (C - 1) for every item alike).
    estimate = estimate_mean(SCORES, ITEMS, share=False)
    assert estimate.stderr == pytest.approx(math.sqrt(0.8 / 36))
    assert (estimate.items, estimate.rows) == (3, 6)
    # Bell-McCaffrey: sizes s = 3, 2, 1, u² = 1 / (1 - h) = 2, 1.5, 1.2: Σ s²u⁴ = 46.44, Σ s³u⁴ / N = 21.24,
    # (Σ s²u²)² / N² = 25.2² / 36 = 17.64; df = 36 / (46.44 - 2 * 21.24 + 17.64) = 36 / 21.6 = 5/3 (not C - 1
    # = 2).
    half = stats.t.ppf(0.975, 5 / 3) * estimate.stderr
    assert estimate.ci95 == pytest.approx((0.5 - half, 0.5 + half))


def test_equal_clusters_keep_the_cr1_error_and_c_minus_1_degrees_of_freedom():
    # 4 items of 3 rows: 1 / (1 - h) = 4/3 = C / (C - 1) for each, and Bell-McCaffrey's df is C - 1 = 3.
    scores = [0.2, 0.9, 0.4, 0.4, 1.0, 0.0, 0.7, 0.1, 0.3, 0.5, 0.5, 0.8]
    items = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    mean = sum(scores) / 12
    sums = [sum(scores[3 * i : 3 * i + 3]) - 3 * mean for i in range(4)]
    cr1 = math.sqrt(4 / 3 * sum(e * e for e in sums)) / 12
    estimate = estimate_mean(scores, items)
    assert estimate.stderr == pytest.approx(cr1)
    half = stats.t.ppf(0.975, 3) * cr1
    assert estimate.ci95 == pytest.approx((mean - half, mean + half))


def test_clustering_moves_the_error_either_way():
    # Rows of one item that agree widen it; rows of one item that disagree narrow it.
    agree = estimate_mean([1, 1, 0, 0], ["a", "a", "b", "b"])
    disagree = estimate_mean([1, 0, 1, 0], ["a", "a", "b", "b"])
    plain = estimate_mean([1, 1, 0, 0])
    assert agree.stderr == pytest.approx(0.5)  # 2 * (1 + 1) / 16: sqrt(0.25)
    assert disagree.stderr == 0.0
    assert plain.stderr == pytest.approx(math.sqrt(1 / 3 / 4))
    assert disagree.stderr < plain.stderr < agree.stderr


def test_one_row_per_item_is_the_plain_error():
    assert estimate_mean(SCORES, list("uvwxyz")).stderr == pytest.approx(estimate_mean(SCORES).stderr)


def test_equal_clusters_give_the_plain_error_of_the_item_means():
    scores = [0.2, 0.9, 0.4, 0.4, 1.0, 0.0, 0.7, 0.1, 0.3]
    items = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    means = [sum(scores[3 * i : 3 * i + 3]) / 3 for i in range(3)]
    assert estimate_mean(scores, items).stderr == pytest.approx(estimate_mean(means).stderr)


def test_a_single_cluster_and_a_single_row_have_no_standard_error():
    one_item = estimate_mean([1, 0, 1], ["a", "a", "a"])
    assert (one_item.mean, one_item.stderr, one_item.ci95, one_item.items, one_item.rows) == (
        pytest.approx(2 / 3),
        None,
        None,
        1,
        3,
    )
    one_row = estimate_mean([0.25])
    assert (one_row.mean, one_row.stderr, one_row.items, one_row.rows) == (0.25, None, 1, 1)


def test_every_row_right_still_has_an_interval():
    # One row per item, all 4 right: SE 0, and Wilson's interval on n = N with t on 3 df: (N / (N + t²), 1).
    # (The pseudo-item, half right, gives deff⁺ = 0.016 * 5 / 0.09 < 1: no more than one.)
    t3 = stats.t.ppf(0.975, 3)
    one_row = estimate_mean([1.0] * 4)
    assert one_row.stderr == 0.0
    assert one_row.ci95 == pytest.approx((4 / (4 + t3 * t3), 1.0))
    # Three items of four rows, all right: nothing says how an item's rows go together, so the pseudo-item (4
    # rows, 2 right) decides: totals 4, 4, 4, 2 of 16 rows, p = 7/8, e = 0.5, 0.5, 0.5, -1.5, 1 / (1 - h) =
    # 4/3: SE² = 4 / 256, deff⁺ = SE² * 16 / (7/8 * 1/8) = 16/7, n* = 12 / deff⁺ = 5.25, t on 2 df.
    t2 = stats.t.ppf(0.975, 2)
    clustered = estimate_mean([1.0] * 12, [i // 4 for i in range(12)])
    assert clustered.stderr == 0.0
    assert clustered.ci95 == pytest.approx((5.25 / (5.25 + t2 * t2), 1.0))
    # All wrong: the mirror image.
    wrong = estimate_mean([0.0] * 4)
    assert wrong.ci95 == pytest.approx((0.0, t3 * t3 / (4 + t3 * t3)))


def test_a_graded_score_that_never_varies_has_a_point_interval():
    estimate = estimate_mean([0.5] * 5, [0, 0, 1, 2, 2])
    assert estimate.stderr == 0.0
    assert estimate.ci95 == (0.5, 0.5)


def test_nan_scores_are_left_out_and_nothing_to_average_is_an_error():
    estimate = estimate_mean([1.0, math.nan, 0.0], ["a", "b", "c"])
    assert (estimate.mean, estimate.items, estimate.rows) == (0.5, 2, 2)
    with pytest.raises(ValueError, match="no scores"):
        estimate_mean([])
    with pytest.raises(ValueError, match="3 scores but 2 cluster ids"):
        estimate_mean([1, 0, 1], ["a", "b"])


def test_figures_overall_and_per_group_in_metrics_json_shape():
    groups = ["Irony", "Irony", "Irony", "Maxims", "Maxims", None]
    out = uncertainty_figures("acc", SCORES, ITEMS, groups)
    assert out["acc_stderr"] == pytest.approx(math.sqrt(0.8 / 36))
    assert (out["acc_n"], out["acc_rows"]) == (3.0, 6.0)
    assert out["acc_ci95_low"] < 0.5 < out["acc_ci95_high"]
    # Irony is one item of three rows: counts, no standard error.
    assert out["acc_n/Irony"] == 1.0 and out["acc_rows/Irony"] == 3.0
    assert "acc_stderr/Irony" not in out
    # Maxims is one item of two rows too (b); the unlabelled row is in no group.
    assert out["acc_n/Maxims"] == 1.0 and "acc_stderr/Maxims" not in out
    assert not any(key.endswith("/None") for key in out)


def test_per_group_error_is_that_group_alone():
    groups = ["x", "x", "y", "y", "x", "y"]
    graded = [0.9, 0.3, 0.5, 0.5, 0.0, 0.4]
    out = uncertainty_figures("p_true", graded, None, groups)
    x = [graded[i] for i in (0, 1, 4)]  # 0.9, 0.3, 0: mean 0.4, squared deviations .25 + .01 + .16 = .42
    assert out["p_true_stderr/x"] == pytest.approx(math.sqrt(0.42 / 2 / 3))
    half = stats.t.ppf(0.975, 2) * out["p_true_stderr/x"]
    assert out["p_true_ci95_high/x"] == pytest.approx(sum(x) / 3 + half)
    # Right/wrong per group: Wilson's interval of that group's rows alone.
    right = uncertainty_figures("acc", SCORES, None, groups)
    assert (right["acc_ci95_low/x"], right["acc_ci95_high/x"]) == pytest.approx(
        estimate_mean([SCORES[i] for i in (0, 1, 4)]).ci95
    )


def test_empty_input_and_groups_without_scores_give_no_keys():
    assert uncertainty_figures("acc", [], None, []) == {}
    out = uncertainty_figures("human_corr", [0.5, math.nan, -0.5], None, ["a", "b", "a"])
    assert "human_corr_n/a" in out and not any(key.endswith("/b") for key in out)


def test_cell_and_keys():
    assert format_estimate(0.3374, 0.0213, 650) == "0.337 ± 0.021 (n=650)"
    assert format_estimate(0.25, None, 1) == "0.250 (n=1)"
    metrics = {"test/acc": 0.5, "test/acc_stderr": 0.1, "test/acc_n": 3.0, "test/acc/Irony": 1.0}
    metrics["test/acc_n/Irony"] = 1.0
    assert metrics_cell(metrics, "test/acc") == "0.500 ± 0.100 (n=3)"
    assert metrics_cell(metrics, "test/acc", "Irony") == "1.000 (n=1)"
    assert metrics_cell({"test/acc": 0.5}, "test/acc") == "0.500"
    with pytest.raises(KeyError, match="test/mrr"):
        metrics_cell(metrics, "test/mrr")
    assert is_uncertainty_key("test/acc_stderr") and is_uncertainty_key("test/acc_ci95_low/Irony")
    assert is_uncertainty_key("test/acc/t0.3_n/Irony")
    assert not is_uncertainty_key("test/acc/Irony") and not is_uncertainty_key("test/count")


# -- the metrics that report them ----------------------------------------------------------------------------


def test_grouped_mean_metric_reports_clustered_figures_per_group():
    import torch
    from batch_rows import rows

    from pragexp.metrics import GroupedMeanMetric

    metric = GroupedMeanMetric(["acc"], ["x", "y"])
    groups = torch.tensor([0, 0, 0, 1, 1, 1])
    clusters = torch.tensor([0, 0, 0, 1, 1, 2])
    metric.update(rows(torch.arange(6), groups, cluster=clusters), acc=torch.tensor(SCORES))
    metric.update(
        rows(torch.tensor([0]), torch.tensor([0]), cluster=torch.tensor([0])), acc=torch.tensor([1.0])
    )  # a pad
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["acc_stderr"] == pytest.approx(math.sqrt(0.8 / 36), rel=1e-6)
    assert (out["acc_n"], out["acc_rows"], out["count"]) == (3.0, 6.0, 6.0)
    assert out["acc_n/x"] == 1.0 and "acc_stderr/x" not in out
    assert out["acc_stderr/y"] == pytest.approx(estimate_mean([1, 0, 0], [1, 1, 2]).stderr, rel=1e-6)
    plain = GroupedMeanMetric(["acc"])
    plain.update(rows(torch.arange(6), torch.full((6,), -1)), acc=torch.tensor(SCORES))
    assert float(plain.compute()["acc_stderr"]) == pytest.approx(math.sqrt(0.05), rel=1e-6)


def test_choice_metric_clusters_by_item_and_leaves_out_missing_correlations():
    import torch
    from batch_rows import choice_rows

    from pragexp.metrics.choice import ChoiceMetric

    metric = ChoiceMetric(["Irony"], ["seed0", "seed1"])
    metric.update(
        *choice_rows(
            torch.arange(6),
            torch.tensor(SCORES),
            torch.tensor([0.9, 0.1, 0.8, 0.7, 0.4, 0.3]),
            group=torch.zeros(6, dtype=torch.long),
            view=torch.tensor([0, 1, 0, 1, 0, 1]),
            kind=torch.full((6,), -1),
            corr=torch.tensor([1.0, math.nan, 0.5, -0.5, math.nan, 0.0]),
            cluster=torch.tensor([7, 7, 7, 8, 8, 9]),
        )
    )
    out = {k: float(v) for k, v in metric.compute().items()}
    expected = estimate_mean(SCORES, ITEMS)
    assert out["acc_stderr"] == pytest.approx(expected.stderr, rel=1e-6)
    assert out["acc_stderr/Irony"] == out["acc_stderr"] and out["acc_n/Irony"] == 3.0
    assert out["acc_ci95_low"] == pytest.approx(expected.ci95[0], rel=1e-6)
    assert (out["human_option_corr_rows"], out["human_option_corr_n"]) == (4.0, 3.0)
    assert out["p_true_rows"] == 6.0


def test_classification_metric_reports_accuracy_and_no_answer_figures():
    import torch
    from batch_rows import rows

    from pragexp.metrics.classification import ClassificationMetric

    metric = ClassificationMetric(["yes", "no"], no_answer=True)
    metric.update(rows(torch.arange(4), label=torch.tensor([0, 0, 1, 0])), torch.tensor([0, 1, -1, 0]))
    out = {k: float(v) for k, v in metric.compute().items()}
    assert out["acc_stderr"] == pytest.approx(estimate_mean([1, 0, 0, 1]).stderr, rel=1e-6)
    assert out["no_answer_stderr"] == pytest.approx(0.25, rel=1e-6)  # (0, 0, 1, 0): sqrt(0.25 / 4)
    # F1 has an error too since issue 46: the cluster bootstrap's (tests/test_metrics.py)
    assert out["acc_n"] == 4.0 and out["macro_f1_n"] == 4.0 and out["macro_f1_stderr"] > 0


def test_choice_metric_gives_views_positions_and_error_kinds_their_figures():
    import torch
    from batch_rows import choice_rows

    from pragexp.metrics.choice import ChoiceMetric

    metric = ChoiceMetric([], ["seed0", "seed1"], ["literal", "associate"], ["A", "B"])
    correct = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    metric.update(
        *choice_rows(
            torch.arange(8),
            correct,
            correct,
            group=torch.full((8,), -1),
            view=torch.tensor([0, 1] * 4),
            kind=torch.tensor([-1, 0, 1, -1, 0, 0, -1, 1]),
            corr=torch.full((8,), math.nan),
            cluster=torch.tensor([0, 0, 1, 1, 2, 2, 3, 3]),
            predicted=torch.tensor([0, 1, 1, 0, -1, 1, 0, 1]),
        )
    )
    out = {k: float(v) for k, v in metric.compute().items()}
    seed0 = estimate_mean([1, 0, 0, 1], [0, 1, 2, 3])
    assert out["acc_view_stderr/seed0"] == pytest.approx(seed0.stderr) and out["acc_view_n/seed0"] == 4
    chose_b = estimate_mean([0, 1, 1, 0, 0, 1, 0, 1], [0, 0, 1, 1, 2, 2, 3, 3])
    assert out["chosen/B"] == 0.5 and out["chosen_stderr/B"] == pytest.approx(chose_b.stderr)
    assert out["chosen_n/none"] == 4 and out["chosen_rows/none"] == 8
    # Of the five wrong answers with a kind (rows 1, 2, 4, 5, 7 in units 0, 1, 2, 2, 3), three chose a
    # literal.
    literal = estimate_mean([1, 0, 1, 1, 0], [0, 1, 2, 2, 3])
    assert out["error_share/literal"] == pytest.approx(0.6)
    assert (
        out["error_share_stderr/literal"] == pytest.approx(literal.stderr)
        and out["error_share_n/literal"] == 4
    )
    assert "acc_view_std_stderr" not in out  # a spread: no interval
