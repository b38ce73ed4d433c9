"""Paired comparison of two runs on the same items (pragexp/report/compare.py, pragexp/metrics/paired.py), on fixtures with answers computed by
hand."""

import json

import pytest

from pragexp.metrics.paired import match_runs
from pragexp.report.cli import main as report_main
from pragexp.report.compare import compare_runs, format_comparison, main, read_predictions


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
    assert acc.test == "sign-flip over items, exact"
    assert acc.p_value == pytest.approx(0.25)
    assert acc.difference == pytest.approx(0.5)


def test_rows_of_one_item_are_one_unit(tmp_path):
    # Two items in two option orders each: right/wrong, but clustered: no McNemar; the sign flips are of items.
    clusters = [0, 0, 1, 1]
    run_a = write_run(tmp_path / "a", choice_records([0, 0, 0, 1], clusters=clusters))
    run_b = write_run(tmp_path / "b", choice_records([1, 1, 1, 1], clusters=clusters))
    acc = by_metric(compare_runs(run_a, run_b), "acc")
    assert (acc.items, acc.rows) == (2, 4)
    assert acc.test == "sign-flip over items, exact"
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
