"""The scorecard (pragexp.report.scorecard) of the LLM benchmarks (hu_pragmatics, ludwig,
bigbench_implicatures): their columns, cells and published rows, HU's seven phenomena without data reports,
LUDWIG's best k."""

import statistics

import pytest
from scorecard_runs import (
    LUDWIG_0SHOT,
    LUDWIG_5SHOT,
    benchmark_runs,  # noqa: F401 (a fixture)
    hu_run,
    ludwig_run,
    parse,
)

from pragexp.report import find_runs, scorecard


def test_the_llm_benchmarks_columns_cells_and_published_rows(benchmark_runs):  # noqa: F811
    card = scorecard.build(find_runs([benchmark_runs]))
    text = scorecard.markdown(card)
    print(text)
    table = parse(text)
    hu, zero, best, bigbench = (
        "Hu et al. acc",
        "LUDWIG 0-shot acc",
        "LUDWIG best-k acc",
        "BIG-bench implicatures acc",
    )
    assert [c.title for c in card.columns] == [hu, zero, best, bigbench]
    llm = next(r for r in card.rows if r.name == "smollm2 0-shot")
    # Hu: the templates' mean, the root mean square of their standard errors over items, and their sample std
    # apart.
    assert llm.cells[hu].mean == pytest.approx(0.35) and llm.cells[hu].n == 2
    assert table["smollm2 0-shot"][hu] == "0.350 ± 0.032 (n=124 items); sd 0.071 over 2 templates"
    assert llm.cells[hu].half == pytest.approx(2 * (0.001**0.5))  # the figure's error bar: the 95% interval
    # LUDWIG 0-shot: the six templates' mean ± their population std (np.std), not the sample std.
    cell = llm.cells[zero]
    assert (cell.mean, cell.n) == (pytest.approx(sum(LUDWIG_0SHOT) / 6), 6)
    assert cell.std == pytest.approx(statistics.pstdev(LUDWIG_0SHOT))
    assert cell.std != pytest.approx(statistics.stdev(LUDWIG_0SHOT))
    # Best k: k=5 (mean 0.61) beats k=30 (0.59) and k=0 (0.547); its k is noted; no k-shot rows of their own.
    cell = llm.cells[best]
    assert cell.mean == pytest.approx(0.61) and cell.std == pytest.approx(statistics.pstdev(LUDWIG_5SHOT))
    assert "smollm2 0-shot, LUDWIG best-k acc: prompt.shots=5" in text
    assert not any(name.startswith(("smollm2 5-shot", "smollm2 30-shot")) for name in table)
    assert table["smollm2 0-shot"][bigbench] == "0.550"

    # Chance: Hu's 1/options weighted by the paper's items over the five phenomena the runs cover.
    hu_chance = (40 / 2 + 20 / 4 + 25 / 4 + 19 / 4 + 20 / 5) / 124
    assert next(c for c in card.columns if c.title == hu).chance == pytest.approx(hu_chance)
    assert [table["chance"][c] for c in (hu, zero, best, bigbench)] == [f"{hu_chance:.3f}", *["0.500"] * 3]
    # The papers' rows: Hu's item-weighted over the same five phenomena (Humour and IndirectSpeech left out).
    davinci = (40 * 0.7 + 20 * 0.79 + 25 * 0.576 + 19 * 0.653 + 20 * 0.78) / 124
    assert table["text-davinci-002 (paper)"][hu] == f"{davinci:.3f}" == "0.695"
    human = (40 * 0.857 + 20 * 0.842 + 25 * 0.919 + 19 * 0.796 + 20 * 0.897) / 124
    assert table["human (paper)"][hu] == f"{human:.3f}" and "GRICE QA acc" not in table["human (paper)"]
    assert table["gpt2 (paper)"][hu] != "–" and table["gpt2 (paper)"][zero] == "–"
    assert "CoherenceInference (40 items), Deceits (20 items), Irony (25 items), Maxims (19 items)" in text
    assert "Humour" not in text.split("Columns:", 1)[1]
    # LUDWIG's: prompt.shots picks the column; people in both (k does not apply); chance rows are the chance
    # row.
    assert (table["text-davinci-002 (paper)"][zero], table["text-davinci-002 (paper)"][best]) == (
        "0.706",
        "0.806",
    )
    assert "text-davinci-002 (paper), LUDWIG best-k acc: prompt.shots=30" in text
    assert (table["text-davinci-001 (paper)"][zero], table["text-davinci-001 (paper)"][best]) == (
        "0.720",
        "–",
    )
    assert table["human_average (paper)"][zero] == table["human_average (paper)"][best] == "0.862"
    assert table["human_best (paper)"][best] == "0.898"
    assert (table["blenderbot_best (paper)"][zero], table["opt_best (paper)"][zero]) == ("0.534", "0.615")
    assert not {"chance (paper)", "random (paper)"} & set(table)
    assert not any("prompt.shots" in name for name in table)


def test_hu_without_data_reports_compares_all_seven_phenomena(tmp_path):
    hu_run(tmp_path, "hu", "authors", {"test/acc": 0.4})
    card = scorecard.build(find_runs([tmp_path]))
    column = next(c for c in card.columns if c.title == "Hu et al. acc")
    items = (40, 20, 25, 20, 25, 19, 20)
    assert column.covered[2] == "Humour" and sum(column.items) == sum(items) == 169
    assert column.chance == pytest.approx(
        (40 / 2 + 20 / 4 + 25 / 5 + 20 / 4 + 25 / 4 + 19 / 4 + 20 / 5) / 169
    )
    davinci = (0.7, 0.79, 0.552, 0.83, 0.576, 0.653, 0.78)
    cell = next(r for r in card.rows if r.name == "text-davinci-002 (paper)").cells["Hu et al. acc"]
    assert cell.mean == pytest.approx(sum(n * a for n, a in zip(items, davinci, strict=True)) / 169)
    assert "no run's data_report.json says" in scorecard.markdown(card)
    assert [c.title for c in card.columns][-1] == "Hu et al. acc"  # no LUDWIG or BIG-bench run: no column


def test_ludwig_best_k_takes_the_smaller_k_on_a_tie_and_the_contrastive_setting_is_a_row(tmp_path):
    for shots in (0, 10):
        for template, acc in enumerate((0.6, 0.7)):
            ludwig_run(tmp_path, f"k{shots}t{template}", template, shots, {"test/acc": acc})
    ludwig_run(tmp_path, "contrastive", 0, 0, {"test/acc": 0.8}, extra=("prompt=ludwig_contrastive",))
    text = scorecard.markdown(scorecard.build(find_runs([tmp_path])))
    table = parse(text)
    assert (
        table["smollm2 0-shot"]["LUDWIG best-k acc"] == "0.650; pop. sd 0.050 over 2 templates"
    )  # population std of 0.6, 0.7
    assert "smollm2 0-shot, LUDWIG best-k acc: prompt.shots=0" in text
    contrastive = table["smollm2 0-shot (prompt=ludwig_contrastive)"]
    assert contrastive["LUDWIG 0-shot acc"] == contrastive["LUDWIG best-k acc"] == "0.800"
