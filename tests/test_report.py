"""pragexp.report on fixture run directories: grouping over seeds and folds with the paper beside, a cell's
mean over items with its uncertainty, missing folders. Published numbers: test_report_paper_files; a dataset's
own tables: test_report_dataset_tables."""

import json

import pytest
from report_runs import table, write_run

from pragexp import report


@pytest.fixture
def runs_dir(tmp_path):
    root = tmp_path / "multirun"
    for seed, (r1, acc_ig) in enumerate([(0.90, 0.5), (0.92, 0.6), (0.94, 0.7)]):
        write_run(
            root,
            f"memnn{seed}",
            "grice_qa",
            "memnn",
            {"test/acc": r1, "test/acc/ignorance": acc_ig, "test/count": 10, "val/acc": 0.9},
            seed=seed,
        )
        write_run(
            root,
            f"inf{seed}",
            "grice_qa",
            "memnn_inf",
            {"test/acc": r1 + 0.03, "test/acc/ignorance": acc_ig + 0.1},
            seed=seed,
            experiment="grice/table6_memnn_inf",
            extra=("model.inference_ckpt=/a/b.ckpt",),
        )
    write_run(root, "lr", "grice_qa", "memnn", {"test/acc": 0.5}, extra=("optimizer.lr=0.1",))
    for fold in range(10):  # a Circa-like leave-one-scenario-out study
        write_run(
            root,
            f"fold{fold}",
            "circa",
            "bert",
            {"test/acc": 0.5 + 0.01 * fold, "test/f1/yes": 0.6},
            fold=fold,
            experiment="circa/bert_yn",
        )
    return root


def test_table_groups_seeds_and_folds_and_shows_the_paper(runs_dir, tmp_path, monkeypatch):
    paper_dir_files = tmp_path / "grice"
    paper_dir_files.mkdir()
    rows = {"memnn": {"test/acc": 80.0}, "table6_memnn_inf": {"test/acc": 90.0, "test/acc/ignorance": 85.7}}
    (paper_dir_files / "grice.json").write_text(
        json.dumps({"source": "test", "unit": "percent", "tasks": {"grice_qa": {"rows": rows}}})
    )
    fake = {"grice.json": paper_dir_files / "grice.json"}  # the paper file grice_qa declares: this one
    monkeypatch.setattr(report.tables, "paper_file", lambda record: fake.get(record.task.paper))
    from matplotlib.axes import Axes

    ticks = []
    monkeypatch.setattr(Axes, "scatter", lambda self, xs, ys, **kw: ticks.append(list(ys)))
    out = tmp_path / "report.md"
    assert report.main([str(runs_dir), "--out", str(out), "--plot", str(tmp_path / "fig5.png")]) == 0
    assert ticks == [[pytest.approx(0.857)]]  # the paper's per-type value, drawn over its row's bar
    text = out.read_text()
    overall = table(text, "grice_qa: test")
    assert (
        overall["memnn"]["test/acc"] == "0.920; sd 0.020 over 3 runs"
        and overall["memnn"]["paper test/acc"] == "0.800"
    )
    assert overall["table6_memnn_inf"]["test/acc"].startswith("0.950; sd 0.020 over")
    assert overall["table6_memnn_inf"]["paper test/acc"] == "0.900"
    assert "test/count" not in overall["memnn"]
    assert "### grice_qa: dev" not in text  # the paper file gives no dev number
    assert "### grice_qa: settings" not in text  # nor settings: its rows have no conditions
    assert overall["memnn (optimizer.lr=0.1)"]["runs"] == "1"
    per_type = table(text, "grice_qa: test/acc/<group>")
    assert per_type["table6_memnn_inf"]["paper test/acc/ignorance"] == "0.857"
    assert "grice_qa: published, not run here" not in text  # every paper row was matched
    # Ten folds: one row, mean, sd [min, max].
    circa = table(text, "circa: test")["bert_yn"]
    assert circa["runs"] == "10" and circa["test/acc"] == "0.545; sd 0.030 over 10 runs [0.500, 0.590]"
    assert (tmp_path / "fig5.png").stat().st_size > 1000


def test_a_cell_is_a_mean_over_items_with_its_uncertainty_and_the_spread_over_runs_apart():
    from types import SimpleNamespace

    from pragexp.reporting.results import runs_cell, summarise
    from pragexp.runs.sampling_unit import SamplingUnit

    def run(metrics, unit=None):  # an old run's record names no sampling unit
        return SimpleNamespace(
            metrics=metrics, record=SimpleNamespace(data=SimpleNamespace(sampling_unit=unit))
        )

    def figures(mean, stderr, n, group=""):
        keys = {"stderr": stderr, "n": n, "ci95_low": mean - 0.05, "ci95_high": mean + 0.05}
        return {f"test/acc_{k}{group}": v for k, v in keys.items()}

    one = run({"test/acc": 0.337, **figures(0.337, 0.021, 650)})
    cell = runs_cell([one], "test/acc")
    assert cell.text == "0.337 ± 0.021 (n=650)" and cell.half == pytest.approx(0.05)
    group = run({"test/acc/Irony": 0.5, **figures(0.5, 0.1, 25, "/Irony")})
    assert runs_cell([group], "test/acc/Irony").text == "0.500 ± 0.100 (n=25)"  # test/acc_stderr/Irony
    # n counts the data's sampling units, named where the run's record declares them.
    story = SamplingUnit("story", "the questions about one story share it")
    assert runs_cell([run(one.metrics, story)], "test/acc").text == "0.337 ± 0.021 (n=650 stories)"
    mixed = runs_cell([run(one.metrics, story), one], "test/acc").text  # an older run names none: no name
    assert mixed == "0.337 ± 0.021 (n=650); sd 0.000 over 2 runs"
    # Two seeds on the same items: the root mean square of their standard errors, their sample std apart.
    other = run({"test/acc": 0.347, **figures(0.347, 0.029, 650)})
    two = runs_cell([one, other], "test/acc")
    assert two.text == "0.342 ± 0.025 (n=650); sd 0.007 over 2 runs"
    # An old run (no figures) among them: the bare mean, the spread still shown; alone: the bare figure.
    old = run({"test/acc": 0.5})
    assert runs_cell([one, old], "test/acc").text == "0.418; sd 0.115 over 2 runs"
    assert runs_cell([old], "test/acc").text == "0.500" and runs_cell([old], "test/f1") is None
    # Folds on other test items: n as the range; more than 3 runs with span: [min, max].
    folds = [
        run({"test/acc": v, **figures(v, 0.02, n)}) for v, n in ((0.5, 90), (0.6, 110), (0.7, 100), (0.8, 95))
    ]
    assert (
        runs_cell(folds, "test/acc", span=True).text
        == "0.650 ± 0.020 (n=90–110); sd 0.129 over 4 runs [0.500, 0.800]"
    )
    s = summarise([1.0, 2.0, 3.0, 4.0])
    assert (s["mean"], s["min"], s["max"]) == (2.5, 1.0, 4.0) and s["std"] == pytest.approx(1.2910, abs=1e-4)


def test_missing_dirs(tmp_path, capsys):
    assert report.main([str(tmp_path / "absent")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert report.markdown_report([]) == "No metrics.json found.\n"
