"""Paired comparison of two runs on the same items (pragexp/report/compare.py, pragexp/metrics/paired.py), on
fixtures with answers computed by hand."""

import json

import numpy as np
import pytest
from scipy import stats

from pragexp.metrics.multiple import holm
from pragexp.metrics.paired import match_runs
from pragexp.report.cli import main as report_main
from pragexp.report.compare import (
    compare_runs,
    comparison,
    format_comparison,
    main,
    read_predictions,
    unit_line,
)
from pragexp.runs.record import DataRecord, ModelRecord, RunRecord, TaskRecord, write_run_record
from pragexp.runs.sampling_unit import SamplingUnit


def write_run(folder, records):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "predictions.jsonl", "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")
    return folder


def choice_records(correct, groups=None, clusters=None):
    records = []
    for i, right in enumerate(correct):
        record = {
            "index": i,
            "gold": 0,
            "correct": bool(right),
            "probs": [0.6 if right else 0.4, 0.4 if right else 0.6],
        }
        if groups:
            record["group"] = groups[i]
        if clusters:
            record["cluster"] = clusters[i]
        records.append(record)
    return records


def by_metric(differences, metric, group="all"):
    return next(d for d in differences if d.metric == metric and d.group == group)


def test_mcnemar_on_right_and_wrong(tmp_path):
    # 10 items: both right on 2, both wrong on 2, A alone right on 1, B alone right on 5.
    a = [1, 1, 0, 0, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 0, 0, 0, 1, 1, 1, 1, 1]
    run_a, run_b = write_run(tmp_path / "a", choice_records(a)), write_run(tmp_path / "b", choice_records(b))
    acc = by_metric(compare_runs(run_a, run_b), "acc")
    assert (acc.mean_a, acc.mean_b, acc.difference) == (0.3, 0.7, pytest.approx(0.4))
    # Exact McNemar: 6 discordant pairs, 5 for B: p = 2 * P(X >= 5), X ~ Bin(6, 1/2) = 2 * 7/64
    assert acc.p_value == pytest.approx(14 / 64)
    assert acc.test.startswith("McNemar") and "1 right in A only, 5 in B only" in acc.test
    assert (acc.items, acc.rows) == (10, 10)
    assert acc.ci95[0] <= 0.4 <= acc.ci95[1]
    p_true = by_metric(compare_runs(run_a, run_b), "p_true")
    assert p_true.difference == pytest.approx(0.08) and p_true.test.startswith("sign-flip")


def test_sign_flip_test_is_exact_on_few_items(tmp_path):
    # Per item differences 0.25, 0.5, 0.75: of the 8 sign flips, 2 reach |sum| >= 1.5, p = 2/8.
    run_a = write_run(tmp_path / "a", [{"index": i, "acc": 0.0} for i in range(3)])
    run_b = write_run(tmp_path / "b", [{"index": i, "acc": 0.25 * (i + 1)} for i in range(3)])
    acc = by_metric(compare_runs(run_a, run_b), "acc")
    assert acc.test == "sign-flip over units, exact"
    assert acc.p_value == pytest.approx(0.25)
    assert acc.difference == pytest.approx(0.5)


def test_rows_of_one_item_are_one_unit(tmp_path):
    # Two items in two option orders each: right/wrong, but clustered: no McNemar; the sign flips are of
    # items.
    clusters = [0, 0, 1, 1]
    run_a = write_run(tmp_path / "a", choice_records([0, 0, 0, 1], clusters=clusters))
    run_b = write_run(tmp_path / "b", choice_records([1, 1, 1, 1], clusters=clusters))
    acc = by_metric(compare_runs(run_a, run_b), "acc")
    assert (acc.items, acc.rows) == (2, 4)
    assert acc.test == "sign-flip over units, exact"
    # item sums of B - A: 2 and 1; flips give |sum| 3, 1, 1, 3: two of four reach 3.
    assert acc.p_value == pytest.approx(0.5)


def test_the_interval_is_seeded_and_per_group(tmp_path):
    groups = ["x"] * 6 + ["y"] * 6
    a = [1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 1, 1, 0, 1, 0, 1, 1, 1]
    run_a = write_run(tmp_path / "a", choice_records(a, groups))
    run_b = write_run(tmp_path / "b", choice_records(b, groups))
    first, again = compare_runs(run_a, run_b, seed=3), compare_runs(run_a, run_b, seed=3)
    assert [d.ci95 for d in first] == [d.ci95 for d in again]
    assert {d.group for d in first} == {"all", "x", "y"}
    x = by_metric(first, "acc", "x")
    assert x.difference == pytest.approx(2 / 6) and x.items == 6
    # A constant difference has a point interval.
    same = write_run(tmp_path / "c", [{"index": i, "acc": 0.5} for i in range(5)])
    more = write_run(tmp_path / "d", [{"index": i, "acc": 0.75} for i in range(5)])
    assert by_metric(compare_runs(same, more), "acc").ci95 == pytest.approx((0.25, 0.25))


def test_runs_on_other_items_are_refused(tmp_path):
    a = [{"index": i, "gold": "yes", "predicted": "yes"} for i in range(10)]
    b = [{"index": i, "gold": "yes", "predicted": "no"} for i in range(3, 11)]
    with pytest.raises(ValueError, match="3 of A's 10 rows are not in B, 1 of B's 8 not in A"):
        match_runs(a, b)
    other_gold = [{**r, "gold": "no"} if r["index"] == 4 else r for r in a]
    with pytest.raises(ValueError, match="1 of A's 10 rows are not in B"):
        match_runs(a, other_gold)
    # The same pair read with a stray "\r", grouped otherwise: the same item, in A's group.
    texts = [{"index": 0, "gold": 1, "utterance": "Is it late?", "group": "Idiom", "correct": True}]
    read_otherwise = [{**texts[0], "utterance": "Is it late?\r", "group": "Other"}]
    ((row_a, row_b),) = match_runs(texts, read_otherwise)
    assert row_a.group == "Idiom" and row_b.group == "Other"


def test_the_command_prints_a_table_and_names_bad_lines(tmp_path, capsys):
    run_a = write_run(
        tmp_path / "a",
        [{"index": i, "gold": "yes", "predicted": p} for i, p in enumerate(["yes", "no", "yes"])],
    )
    run_b = write_run(tmp_path / "b", [{"index": i, "gold": "yes", "predicted": "yes"} for i in range(3)])
    main([str(run_a), str(run_b)])
    out = capsys.readouterr().out
    # Each run's mean with its standard error over the items: sd(1, 0, 1) / sqrt(3) = 0.333.
    assert (
        "| acc | all | 0.667 ± 0.333 (n=3) | 1.000 ± 0.000 (n=3) | +0.333 |" in out
        and "McNemar, exact" in out
    )
    assert "| acc | yes |" in out  # Circa-like records: grouped by gold label
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "predictions.jsonl").write_text('{"index": 0}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad/predictions.jsonl:2: not valid JSON"):
        read_predictions(tmp_path / "bad")
    with pytest.raises(SystemExit):
        main([str(run_a), str(tmp_path / "missing")])
    assert "no such file" in capsys.readouterr().err
    assert format_comparison([], "A", "B").startswith("A: A\nB: B\n")


def test_the_report_command_takes_compare_as_its_first_word(tmp_path, capsys):
    run_a = write_run(
        tmp_path / "a", [{"index": i, "gold": "yes", "predicted": p} for i, p in enumerate(["yes", "no"])]
    )
    run_b = write_run(tmp_path / "b", [{"index": i, "gold": "yes", "predicted": "yes"} for i in range(2)])
    assert report_main(["compare", str(run_a), str(run_b), "--seed", "3"]) == 0
    assert "McNemar, exact" in capsys.readouterr().out


def test_holm_on_the_worked_example():
    # Wikipedia's "Holm–Bonferroni method" example: p = 0.01, 0.04, 0.03, 0.005 at α = 0.05. Sorted, 0.005 * 4
    # = 0.02 and 0.01 * 3 = 0.03 are rejected, 0.03 * 2 = 0.06 is not, and 0.04 * 1 = 0.04 is raised to 0.06
    # (the step-down stops at the first that is kept).
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0] and holm([]) == []
    assert holm([0.02]) == [0.02]  # one comparison: nothing to adjust


def write_unit(folder, name, reason="why they are drawn together"):
    """A run.json whose data declares the sampling unit `name`."""
    data = DataRecord("tomato", "release", sampling_unit=SamplingUnit(name, reason))
    write_run_record(folder, RunRecord(TaskRecord("tomato"), data, ModelRecord("llm", "tiny 0-shot")))


def test_the_table_names_its_unit_and_adjusts_its_p_values(tmp_path, capsys):
    clusters = [i // 3 for i in range(12)]
    a = [1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1]
    run_a = write_run(tmp_path / "a", choice_records(a, ["x"] * 6 + ["y"] * 6, clusters))
    run_b = write_run(tmp_path / "b", choice_records(b, ["x"] * 6 + ["y"] * 6, clusters))
    write_unit(run_a, "conversation", "its questions share one story")
    write_unit(run_b, "conversation")
    main([str(run_a), str(run_b)])
    out = capsys.readouterr().out
    assert "paired by conversation (n = 4 clusters): its questions share one story" in out
    assert "6 comparisons in this table; p (Holm): adjusted for all 6 by Holm's step-down" in out
    differences = compare_runs(run_a, run_b)
    adjusted = holm([d.p_value for d in differences])
    assert (differences[0].metric, differences[0].group) == ("acc", "all")
    assert f"| {differences[0].p_value:.4g} | {adjusted[0]:.4g} | 4 (12) |" in out
    assert adjusted[0] > differences[0].p_value  # six comparisons: the smallest p is multiplied by up to 6
    # Another unit in B: refused, naming both.
    write_unit(run_b, "item")
    with pytest.raises(SystemExit):
        main([str(run_a), str(run_b)])
    assert "different sampling units" in capsys.readouterr().err


def test_runs_without_a_declared_unit_say_so(tmp_path):
    run_a = write_run(tmp_path / "a", choice_records([1, 0, 1, 1]))
    run_b = write_run(tmp_path / "b", choice_records([1, 1, 1, 1]))
    differences, unit = comparison(run_a, run_b)
    assert unit_line(unit, differences) == "unit: not declared (each row its own; n = 4 clusters)"
    clustered_a = write_run(tmp_path / "c", choice_records([1, 0, 1, 1], clusters=[0, 0, 1, 1]))
    differences, unit = comparison(clustered_a, run_b)  # B from before clusters were written: A's are used
    assert by_metric(differences, "acc").items == 2
    assert "rows paired by their records' `cluster` (n = 2 clusters)" in unit_line(unit, differences)
    write_unit(run_b, "item")  # one run declares it: that is the unit
    assert comparison(clustered_a, run_b)[1].name == "item"


def test_the_paired_bootstrap_and_test_resample_units_not_rows(tmp_path):
    # Graded scores on 20 units; then each unit's row four times over (one unit's rows alike). Paired by unit,
    # the interval and the p-value are the same (a unit counts once however many rows it holds); a row
    # bootstrap would see 80 independent rows and give an interval about half as wide.
    rng = np.random.default_rng(3)
    a, b = rng.random(20).round(3), rng.random(20).round(3)
    one = [({"index": i, "p": float(a[i])}, {"index": i, "p": float(b[i])}) for i in range(20)]
    four = [
        (
            {"index": 4 * i + k, "cluster": i, "p": float(a[i])},
            {"index": 4 * i + k, "cluster": i, "p": float(b[i])},
        )
        for i in range(20)
        for k in range(4)
    ]

    def run(rows, name):
        ra = write_run(tmp_path / f"{name}a", [{**r, "acc": r.pop("p")} for r, _ in rows])
        rb = write_run(tmp_path / f"{name}b", [{**r, "acc": r.pop("p")} for _, r in rows])
        return by_metric(compare_runs(ra, rb), "acc")

    single, repeated = run(one, "one"), run(four, "four")
    assert repeated.ci95 == pytest.approx(single.ci95) and repeated.p_value == pytest.approx(single.p_value)
    assert (repeated.items, repeated.rows) == (20, 80)
    rows = stats.bootstrap((np.repeat(b - a, 4),), np.mean, n_resamples=2000, rng=np.random.default_rng(0))
    row_width = rows.confidence_interval.high - rows.confidence_interval.low
    assert row_width < 0.6 * (repeated.ci95[1] - repeated.ci95[0])


def test_the_result_depends_on_no_order_of_the_records(tmp_path):
    clusters = [i // 2 for i in range(16)]
    a = [1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1]
    records_a, records_b = choice_records(a, clusters=clusters), choice_records(b, clusters=clusters)
    first = compare_runs(write_run(tmp_path / "a", records_a), write_run(tmp_path / "b", records_b))
    order = np.random.default_rng(1).permutation(16)
    again = compare_runs(
        write_run(tmp_path / "c", [records_a[i] for i in order]), write_run(tmp_path / "d", records_b[::-1])
    )
    assert [(d.ci95, d.p_value) for d in first] == [(d.ci95, d.p_value) for d in again]
