"""The LLM benchmarks' own report sections (pragexp/data/hu_pragmatics and ludwig: report_section) and their
paper files: Hu et al.'s table per phenomenon beside the paper's models and people, LUDWIG's accuracy per
template and k, and their figures."""

import statistics
from types import SimpleNamespace

import pytest
from report_runs import table
from scorecard_runs import (
    HU_ITEMS,
    LUDWIG_0SHOT,
    LUDWIG_5SHOT,
    LUDWIG_TEMPLATES,
    benchmark_runs,  # noqa: F401 (a fixture)
    hu_metrics,
    hu_run,
)

from pragexp import report
from pragexp.data.hu_pragmatics import report_section as hu
from pragexp.data.ludwig import report_section as ludwig
from pragexp.report import find_runs, main
from pragexp.report.tables import paper_data
from pragexp.reporting.results import llm_label, short_setting
from pragexp.runs.record import Settings

PNG = b"\x89PNG\r\n\x1a\n"


def rows_of(text: str, title: str) -> list[dict[str, str]]:
    """The markdown table under `### title`, a dict per row (its first cells need not be unique)."""
    lines = text.split(f"### {title}\n", 1)[1].strip("\n").splitlines()
    cells = []
    for line in lines[next(i for i, x in enumerate(lines) if x.startswith("|")) :]:
        if not line.startswith("|"):
            break
        cells.append([c.strip() for c in line.strip("|").split("|")])
    return [dict(zip(cells[0], row, strict=True)) for row in cells[2:]]


def row(rows: list[dict[str, str]], **wanted) -> dict[str, str]:
    (found,) = [r for r in rows if all(r[k] == v for k, v in wanted.items())]
    return found


def test_the_paper_files_hold_every_transcribed_cell():
    hu = report.load_paper("hu_pragmatics")
    rows = hu["rows"]
    assert list(rows)[0] == "chance" and list(rows)[-1] == "human" and len(rows) == 10
    assert all(len(cells) == 7 for cells in rows.values())
    items, options = (
        paper_data("hu_pragmatics", "items"),
        paper_data("hu_pragmatics", "options"),
    )
    assert list(items.values()) == [40, 20, 25, 20, 25, 19, 20]
    for phenomenon, n in options.items():  # the chance row is 1 / options
        assert rows["chance"][f"test/acc/{phenomenon}"] == pytest.approx(1 / n)
    assert rows["tk-instruct-11b-def-pos"]["test/acc/Humour"] == 0.408 and "5 seeds" in hu["setting"]
    ludwig = report.load_paper("ludwig")["rows"]
    assert ludwig["human_average"]["test/acc"] == pytest.approx(0.8623)
    assert ludwig["text-davinci-002 (prompt.shots=30)"]["test/acc"] == pytest.approx(0.806)
    models = [k for k in ludwig if k.split(" (")[0] not in ("random", "human_average", "human_best")]
    assert models and all("(prompt.shots=" in k for k in models)  # every model row says its k


def test_no_run_of_ours_matches_the_published_rows(benchmark_runs):  # noqa: F811
    text = report.markdown_report(find_runs([benchmark_runs]))
    hu = table(text, "hu_pragmatics: published, not run here")
    assert len(hu) == 10 and "text-davinci-002" in hu and "human" in hu
    ludwig = table(text, "ludwig: published, not run here")
    assert "text-davinci-002 (prompt.shots=30)" in ludwig and ludwig["human_best"]["test/acc"] == "0.898"


def test_the_hu_section(benchmark_runs):  # noqa: F811
    text = "\n".join(hu.sections(find_runs([benchmark_runs])))
    print(text)
    per = rows_of(text, "Accuracy per phenomenon")
    ours = row(per, model="smollm2", template="authors")
    assert (ours["k"], ours["runs"]) == ("0", "1")
    # ± the standard error clustered by item (n: the phenomenon's items, named), as metrics.json holds it
    assert (
        ours["Irony"] == "0.400 ± 0.020 (n=25 items)"
        and ours["all"] == "0.400 ± 0.020 (n=124 items)"
        and ours["Humour"] == ""
    )
    davinci = row(per, model="text-davinci-002 (paper)")
    assert davinci["Humour"] == "0.552"  # every phenomenon of the paper, covered or not
    assert davinci["all"] == f"{(40 * 0.7 + 20 * 0.79 + 25 * 0.576 + 19 * 0.653 + 20 * 0.78) / 124:.3f}"
    assert row(per, model="human (paper)")["Metaphor"] == "0.897"
    assert row(per, model="chance (paper)")["CoherenceInference"] == "0.500"
    people = row(per, model="people (our data)")
    assert people["Irony"] == "0.900" and people["all"] == "0.900"  # the one phenomenon with people's answers
    assert row(per, model="smollm2", template="letters")["Irony"] == "0.300 ± 0.040 (n=25 items)"
    errors = rows_of(text, hu.SPREAD_TITLE)
    assert [r["template"] for r in errors] == ["authors", "letters"]
    assert errors[0]["IncorrectLiteral"] == "0.600" and errors[0]["human_corr"] == "0.300"
    assert errors[1]["option orders sd"] == "0.100"  # the spread over option orders: a figure apart


def test_the_ludwig_section(benchmark_runs):  # noqa: F811
    text = "\n".join(ludwig.sections(find_runs([benchmark_runs])))
    per = rows_of(text, "Accuracy per template and k")
    assert list(per[0]) == ["model", "k", *LUDWIG_TEMPLATES, "templates"]  # positions read as names
    zero = row(per, model="smollm2", k="0")
    mean, std = statistics.fmean(LUDWIG_0SHOT), statistics.pstdev(LUDWIG_0SHOT)
    assert (
        zero["templates"] == f"{mean:.3f}; pop. sd {std:.3f} over 6 templates"
        and zero["esther_juan"] == "0.520"
    )
    five = row(per, model="smollm2", k="5")
    spread = f"pop. sd {statistics.pstdev(LUDWIG_5SHOT):.3f} over 3 templates"
    assert five["templates"] == f"0.610; {spread}" and five["bob_alice"] == ""
    assert row(per, model="text-davinci-002 (paper)", k="30")["templates"] == "0.806"
    assert row(per, model="text-davinci-002 (paper)", k="0")["templates"] == "0.706"
    assert row(per, model="human_best (paper)", k="–")["templates"] == "0.898"
    types = rows_of(text, "Accuracy per implicature type (over templates, as above)")
    assert (
        row(types, model="smollm2", k="0")["Idiom"] == f"{mean - 0.1:.3f}; pop. sd {std:.3f} over 6 templates"
    )


def test_no_section_without_benchmark_runs(tmp_path):
    hu_run(tmp_path / "a", "hu", "authors", hu_metrics(0.4))
    runs = find_runs([tmp_path])
    assert ludwig.sections(runs) == [] and hu.sections(runs)
    assert hu.sections([]) == ludwig.sections([]) == [] and ludwig.figures([], tmp_path / "none") == []


def test_the_cli_writes_both_figures(benchmark_runs, tmp_path, monkeypatch):  # noqa: F811
    from matplotlib.axes import Axes

    bands, hlines = [], []
    fill_between, axhline = Axes.fill_between, Axes.axhline

    def record_band(self, x, lower, upper, **kw):
        bands.append((list(x), list(lower), list(upper)))
        return fill_between(self, x, lower, upper, **kw)

    def record_hline(self, y=0, **kw):
        hlines.append((y, kw.get("label")))
        return axhline(self, y, **kw)

    monkeypatch.setattr(Axes, "fill_between", record_band)
    monkeypatch.setattr(Axes, "axhline", record_hline)
    folder = tmp_path / "figures"
    assert main([str(benchmark_runs), "--figures", str(folder)]) == 0
    for name in ("hu_pragmatics_phenomena.png", "ludwig_k.png"):
        data = (folder / name).read_bytes()
        assert data[:8] == PNG and len(data) > 10_000, name
    (ks, lower, upper), *rest = bands
    assert ks == [0, 5, 30] and not rest  # one model: one band over its k
    assert upper[0] - lower[0] == pytest.approx(2 * statistics.pstdev(LUDWIG_0SHOT))
    assert (pytest.approx(0.8623), "human_average (paper)") in hlines and (0.5, "chance") in hlines


def test_people_from_the_data_need_a_data_report(tmp_path):
    report_ = {
        "per_phenomenon": {"Irony": 125, "Maxims": 95},
        "human_accuracy": {"Irony": 0.9, "Maxims": 0.8},
    }
    hu_run(tmp_path, "hu", "authors", hu_metrics(0.4), report_)
    hu_run(tmp_path, "hu2", "authors", hu_metrics(0.4), report_)  # the same data: one people's row
    runs = find_runs([tmp_path])
    assert hu.people_from_data(runs) == [(report_["human_accuracy"], report_["per_phenomenon"])]
    header, lines = hu.hu_rows(runs)
    people = dict(zip(header, lines[-1], strict=True))
    assert people["all"] == f"{(125 * 0.9 + 95 * 0.8) / 220:.3f}"  # weighted by our data's own items
    assert set(HU_ITEMS) < set(header)


def test_a_row_names_a_file_or_checkpoint_setting_by_its_file_and_run_not_its_whole_path():
    assert (
        short_setting("data.test_file=/data/ludwig/test_first150.csv") == "data.test_file=test_first150.csv"
    )
    ckpt = "model.ckpt=/work/outputs/circa/bert_yn_s0/checkpoints/best-epoch002.ckpt"
    assert short_setting(ckpt) == "model.ckpt=bert_yn_s0/best-epoch002.ckpt"
    assert short_setting("prompt=ludwig_contrastive") == "prompt=ludwig_contrastive"


def test_a_benchmark_row_shows_the_settings_that_make_another_model_not_those_said_elsewhere():
    settings = Settings(
        model=["llm.dtype=float16"],
        task=["data.types_file=types.csv", "prompt.scoring=generate"],
        other=["llm=smollm2", "prompt.shots=5"],  # the LLM's name and the k column say these
    )
    llm = SimpleNamespace(name="smollm2")
    run = SimpleNamespace(
        record=SimpleNamespace(settings=settings, model=SimpleNamespace(llm=llm)), model="llm"
    )
    assert llm_label(run) == "smollm2 (data.types_file=types.csv, llm.dtype=float16, prompt.scoring=generate)"
    # LUDWIG's type labels say which per-type cells a run has, not another accuracy: its rows hide them
    assert llm_label(run, ludwig.TYPES_FILE) == "smollm2 (llm.dtype=float16, prompt.scoring=generate)"
