"""MultiPragEval's and ToMATO's report sections (pragexp/data/<name>/report_section.py), found through their
tasks' declarations: on runs of the tiny LLM over the fixtures, each cell is metrics.json's figure as
pragexp.metrics.uncertainty writes it, the rows are the run's languages or orders, and the report, its
scorecard and its figures show them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_benchmarks_report import PNG, row, rows_of

from pragexp.data.multiprageval import report_section as mpe
from pragexp.data.tomato import report_section as tomato
from pragexp.metrics.uncertainty import metrics_cell
from pragexp.report import find_runs, main
from pragexp.reporting.groups import run_label
from pragexp.run import run


def unit_cell(units: str):
    """metrics_cell as a section writes it for a run whose data declares `units` (a plural)."""
    return lambda metrics, key, group=None: metrics_cell(metrics, key, group, units=units)


def metrics_of(cfg) -> dict:
    return json.loads(Path(cfg.paths.output_dir, "metrics.json").read_text())


@pytest.fixture
def mpe_run(make_config):
    cfg = make_config(["task=multiprageval", "data.languages=[english,korean]"], name="eval", out="mpe")
    run(cfg)
    return cfg


@pytest.fixture
def tomato_run(make_config):
    cfg = make_config(["task=tomato"], name="eval", out="tomato")
    run(cfg)
    return cfg


def test_multiprageval_per_language_and_type_with_the_letters(mpe_run):
    cell = unit_cell("scenarios")  # n counts the data's sampling units
    metrics = metrics_of(mpe_run)
    runs = find_runs([Path(mpe_run.paths.output_dir)])
    text = "\n".join(mpe.sections(runs))
    print(text)
    per = rows_of(text, "Accuracy per language and type")
    assert [r["language"] for r in per] == ["english", "korean", "all languages", ""]  # no German run
    (ours_run,) = runs
    assert run_label(ours_run).endswith(", letter")  # the LLM with its settings, then its template
    english = row(per, language="english")
    assert english["model, template"] == run_label(ours_run)
    assert english["maxims"] == cell(metrics, "test/acc", "english:maxims")
    assert english["literal"] == cell(metrics, "test/acc", "english:literal")
    assert english["all"] == cell(metrics, "test/acc", "english")
    assert "±" in english["maxims"] and english["maxims"].endswith(
        "(n=8 scenarios)"
    )  # 2 scenarios of each maxim
    both = row(per, language="all languages")
    assert both["quality"] == cell(metrics, "test/acc", "quality")
    assert both["all"] == cell(metrics, "test/acc") and both["all"].endswith(
        "(n=10 scenarios)"
    )  # 20 units: 10 scenarios, 2 languages
    assert set(row(per, **{"model, template": "chance"}).values()) == {"chance", "", "0.200"}
    letters = rows_of(text, "Share of each letter chosen (none: a reply that names no letter)")
    ours = row(letters, **{"model, template": run_label(ours_run)})
    assert [float(ours[x].split()[0]) for x in "ABCDE"] == pytest.approx(
        [metrics[f"test/chosen/{x}"] for x in "ABCDE"], abs=5e-4
    )
    assert ours["A"].endswith(" scenarios)")  # a share with its interval, over the scenarios
    gold = row(letters, **{"model, template": "gold letters (test_suite.csv, 20 units)"})
    assert [gold[x] for x in "ABCDE"] == ["0.200"] * 5  # the fixture's gold letters: 2 rows each


@pytest.mark.slow
def test_tomato_per_state_and_order_false_belief_and_traits(tomato_run):
    cell = unit_cell("conversations")  # n counts the data's sampling units
    metrics = metrics_of(tomato_run)
    runs = find_runs([Path(tomato_run.paths.output_dir)])
    text = "\n".join(tomato.sections(runs))
    print(text)
    per = rows_of(text, "Accuracy per mental state and order")
    assert [r["order"] for r in per] == ["first order", "second order", "both orders", ""]
    first = row(per, order="first order")
    assert first["belief"] == cell(metrics, "test/acc", "belief:first_order")
    assert first["all states"] == cell(metrics, "test/acc", "first_order")
    both = row(per, order="both orders")
    assert both["emotion"] == cell(metrics, "test/acc", "emotion")
    assert both["all states"] == cell(metrics, "test/acc") and both["all states"].endswith(
        "(n=4 conversations)"
    )
    missing = [
        s
        for s in ("belief", "intention", "desire", "emotion", "knowledge")
        if f"test/acc/{s}:second_order" not in metrics
    ]
    assert all(row(per, order="second order")[s] == "" for s in missing)  # no question: an empty cell
    (ours_run,) = runs
    belief = row(rows_of(text, "False belief or not"), **{"model, template": run_label(ours_run)})
    assert belief["false belief"] == cell(metrics, "test/acc", "false_belief")
    traits = rows_of(text, "The asked-about speaker's personality")
    assert "neuroticism:high" not in traits[0] and "neuroticism:low" in traits[0]  # the fixture has no high


def test_tomato_with_one_order_has_no_both_orders_row(make_config):
    cell = unit_cell("conversations")  # n counts the data's sampling units
    cfg = make_config(["task=tomato", "data.file=fb"], name="eval", out="tomato_fb")
    run(cfg)
    metrics = metrics_of(cfg)
    text = "\n".join(tomato.sections(find_runs([Path(cfg.paths.output_dir)])))
    per = rows_of(text, "Accuracy per mental state and order")
    assert [r["order"] for r in per] == ["second order", ""]  # ToMATO-FB: second order only
    assert row(per, order="second order")["all states"] == cell(metrics, "test/acc", "second_order")


def test_the_report_finds_both_sections_their_columns_and_figures(mpe_run, tomato_run, tmp_path):
    folder, card, out = tmp_path / "figures", tmp_path / "scorecard.md", tmp_path / "report.md"
    roots = [mpe_run.paths.output_dir, tomato_run.paths.output_dir]
    assert main([*roots, "--figures", str(folder), "--scorecard", str(card), "--out", str(out)]) == 0
    text = out.read_text()
    assert "## MultiPragEval (Park et al. 2024)" in text and "## ToMATO (Shinoda et al. 2025)" in text
    header = next(line for line in card.read_text().splitlines() if line.startswith("| model"))
    for title in (
        "MultiPragEval maxims acc",
        "MultiPragEval literal acc",
        "ToMATO acc",
        "ToMATO false-belief acc",
    ):
        assert title in header
    for name in ("multiprageval_languages.png", "tomato_states.png"):
        assert (folder / name).read_bytes()[:8] == PNG


def test_no_section_without_their_runs():
    assert mpe.sections([]) == tomato.sections([]) == []
    assert mpe.figures([], Path("unused")) == tomato.figures([], Path("unused")) == []
