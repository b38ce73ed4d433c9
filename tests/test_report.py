"""pragexp.report on fixture run directories: grouping over seeds and folds, paper columns, plot."""

import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import migrated

from pragexp import report
from pragexp.report.tables import paper_data, paper_files
from pragexp.reporting.results import parse_row_name


def data_target(task: str) -> str:
    """The `_target_` of the data module a task's config picks (`/data: circa` in its defaults or its
    bases')."""
    from conftest import CONF, migration

    task = migration().RENAMED_TASKS.get(task, task)  # a run of before issue 25 names the task's old name
    defaults = yaml.safe_load((CONF / "task" / f"{task}.yaml").read_text())["defaults"]
    for entry in defaults:
        if isinstance(entry, str) and entry.startswith("_") and entry != "_self_":
            defaults += yaml.safe_load((CONF / "task" / f"{entry}.yaml").read_text())["defaults"]
    (data,) = {entry["/data"] for entry in defaults if isinstance(entry, dict) and "/data" in entry}
    return yaml.safe_load((CONF / "data" / f"{data}.yaml").read_text())["_target_"]


def write_run(
    root: Path,
    name: str,
    task: str,
    model: str,
    metrics: dict,
    seed: int = 0,
    experiment: str = "none",
    extra: tuple = (),
    fold: int | None = None,
    config: dict | None = None,
) -> Path:
    run_dir = root / name
    (run_dir / ".hydra").mkdir(parents=True)
    overrides = [f"task={task}", f"model={model}", f"seed={seed}", "hydra.run.dir=x", *extra]
    if fold is not None:
        overrides.append(f"data.fold={fold}")
    if experiment != "none":
        overrides.append(f"experiment={experiment}")
    (run_dir / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    choices = {"task": task, "model": model, "experiment": experiment}
    (run_dir / ".hydra" / "hydra.yaml").write_text(
        yaml.safe_dump({"hydra": {"runtime": {"choices": choices}}})
    )
    composed = {"seed": seed, "task_name": "${hydra:x}", **(config or {})}
    # What its run.json is derived from (experiments/migrate_runs.py): its data module and, for an LLM, its
    # model.
    composed["data"] = {"_target_": data_target(task), **composed.get("data", {})}
    if model == "llm":
        composed["model"] = {"_target_": "pragexp.models.llm.PromptedLLM", **composed.get("model", {})}
    (run_dir / ".hydra" / "config.yaml").write_text(yaml.safe_dump(composed))
    (run_dir / "metrics.json").write_text(json.dumps(metrics))
    return migrated(run_dir)


def table(text: str, title: str) -> dict[str, dict[str, str]]:
    """The markdown table under `### title` as {first cell: {header: cell}}."""
    cells = []
    for line in text.split(f"### {title}\n", 1)[1].strip("\n").splitlines():
        if not line.startswith("|"):
            break
        cells.append([c.strip() for c in line.strip("|").split("|")])
    header = cells[0]
    return {row[0]: dict(zip(header, row, strict=True)) for row in cells[2:]}


def row_cells(text: str, task: str, label: str) -> dict[str, str]:
    """One row's cells in its task's settings, dev and test tables ({} for a table it is not in)."""
    out = {}
    for part in ("settings", "dev", "test"):
        if f"### {task}: {part}\n" in text:
            out |= table(text, f"{task}: {part}").get(label, {})
    return out


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
    from pragexp.utils.sampling_unit import SamplingUnit

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


PUBLISHED_ONLY = {"human", "mnli_no_finetuning", "boolq_no_finetuning", "bert_dis_yn"}  # no preset of ours
# The LLM benchmarks' published models, people and chance: no run of ours is named so (ours are `llm`).
HU_MODELS = {"gpt2", "flan-t5-base", "flan-t5-xl", "flan-t5-xxl", "tk-instruct-3b-def-pos", "text-ada-001"}
HU_MODELS |= {"tk-instruct-11b-def-pos", "text-davinci-002", "chance"}
LUDWIG_ROWS = {"human_average", "human_best", "random", "text-davinci-001", "blenderbot_best", "opt_best"}
BIGTOM_ROWS = {"gpt-4", "claude-v1.3", "gpt-3.5-turbo", "text-davinci-003", "llama-65b"}  # and "human"
HITOM_ROWS = {"GPT-4"}  # the repository's GPT-4_data.txt
PUBLISHED_ONLY |= HU_MODELS | LUDWIG_ROWS | BIGTOM_ROWS | HITOM_ROWS


def test_the_shipped_paper_files_load_and_name_existing_tasks_and_presets():
    from conftest import CONF

    presets = {p.stem for p in (CONF / "experiment").rglob("*.yaml")} | {
        p.stem for p in (CONF / "model").glob("*.yaml")
    }
    covered = set()
    for path in paper_files():
        assert path == path.parent / f"{path.parent.name}.json"  # in its dataset's package
        doc = json.loads(path.read_text())
        assert doc["paper"] and doc["source"] and doc["tasks"], path
        for task in doc["tasks"]:
            assert (CONF / "task" / f"{task}.yaml").is_file(), f"{path.name}: no task {task}"
            paper = report.load_paper(task)
            assert paper["source"] == doc["source"] and paper["table"] and paper["rows"]
            covered.add(task)
            for key, row in paper["rows"].items():
                name, conditions = parse_row_name(key)
                assert name in presets | PUBLISHED_ONLY, f"{path.name}: {key}"
                assert all(re.fullmatch(r"[\w.]+=\w+", c) for c in conditions), key
                for metric, cell in row.items():
                    stage, metric_name, *_ = metric.split("/")
                    assert stage in ("val", "test"), metric
                    if metric_name == "q":  # a raw log-likelihood
                        assert cell < 0
                    else:  # every other published score is a fraction once loaded
                        assert all(
                            0.0 <= v <= 1.0 for v in (cell.values() if isinstance(cell, dict) else [cell])
                        )
    assert {
        "grice_recovery",
        "grice_qa",
        "circa",
        "pragmaticqa",
        "hu_pragmatics",
        "ludwig",
        "bigtom",
        "hitom",
    } == covered


def test_the_shipped_tables_are_complete():
    from pragexp.data.circa.io import LABEL_SLUGS, LABELS
    from pragexp.data.grice.schema import IMPLICATURE_TYPES

    recovery, qa = report.load_paper("grice_recovery")["rows"], report.load_paper("grice_qa")["rows"]
    assert len(recovery) == 7 and len(qa) == 7  # Tables 5 and 6: six models and Human each
    assert all(
        set(row) == {"val/r@1", "val/mrr", "test/r@1", "test/mrr"}
        for n, row in recovery.items()
        if n != "human"
    )
    assert recovery["table5_lstm"]["val/mrr"] == 0.9046  # a fraction in the paper: not scaled
    assert {k.rsplit("/", 1)[1] for k in qa["table6_memnn_inf"] if k.count("/") == 2} < set(IMPLICATURE_TYPES)
    circa = report.load_paper("circa")["rows"]
    assert len(circa) == 9 * 2 * 2  # nine models, RELAXED and STRICT, matched and leave-one-scenario-out
    for key, row in circa.items():
        _, conditions = parse_row_name(key)
        labels = next(c.split("=")[1] for c in conditions if c.startswith("data.labels="))
        if "data.setting=matched" in conditions:
            slugs = {LABEL_SLUGS[label] for label in LABELS[labels]}
            assert set(row) == {"val/acc", "test/acc", *(f"test/f1/{s}" for s in slugs)}, key
        else:
            assert set(row) == {"test/acc"} and set(row["test/acc"]) == {"mean", "std", "min", "max"}, key
    fid = report.load_paper("pragmaticqa")["rows"]
    assert [parse_row_name(k)[1] for k in fid] == [{f"retriever.top_k={k}"} for k in (1, 5, 10, 20, 50)]
    for k, row in zip((1, 5, 10, 20, 50), fid.values(), strict=True):
        names = (f"r@{k}", f"r_all@{k}", "f1_lit", "f1_prag", "q")
        assert set(row) == {f"{stage}/{name}" for stage in ("val", "test") for name in names}


def test_grice_table4_is_data_not_a_row():
    from pragexp.data.grice.schema import IMPLICATURE_TYPES

    mix = paper_data("grice", "implicature_types")
    assert set(mix) == {"train", "dev"}
    for split in mix.values():
        assert set(split) == set(IMPLICATURE_TYPES) and sum(split.values()) == pytest.approx(1.0, abs=0.005)
    assert mix["train"]["explicit"] == pytest.approx(0.273) and mix["dev"]["close_but"] == pytest.approx(
        0.108
    )


def test_paper_row_prefers_the_row_whose_settings_match():
    from pragexp.report import Row, paper_row

    paper = {
        "rows": {
            "bert_mnli_yn": {"test/acc": 0.882},
            "bert_mnli_yn (data.labels=strict)": {"test/acc": 0.848},
        }
    }
    strict = Row(
        "circa", "bert_mnli_yn", "bert", "circa/bert_mnli_yn", ("data.labels=strict", "data.path=x.tsv")
    )
    relaxed = Row("circa", "bert_mnli_yn", "bert", "circa/bert_mnli_yn", ("data.path=x.tsv",))
    other = Row("circa", "bert_yn", "bert", "circa/bert_yn", ())
    assert paper_row(strict, paper) == {"test/acc": 0.848}
    assert paper_row(relaxed, paper) == {"test/acc": 0.882}
    assert paper_row(other, paper) == {}


def test_paper_row_conditions_also_match_the_values_the_run_recorded():
    from pragexp.report import Row, Run, paper_row

    paper = {"rows": {"bert_yn (data.labels=relaxed)": {"test/acc": 0.878}}}

    from pragexp.utils.run_record import DataRecord, ModelRecord, RunRecord, TaskRecord

    def row(labels: str, settings=()):
        task = TaskRecord("circa", paper_settings={"data.labels": labels})  # run.json's, from its config
        record = RunRecord(task, DataRecord("circa", "release"), ModelRecord("bert", "bert_yn"))
        run = Run(Path("r"), record, {})
        return Row("circa", "bert_yn", "bert", "circa/bert_yn", settings, [run])

    assert paper_row(row("relaxed"), paper) == {
        "test/acc": 0.878
    }  # relaxed by default, not on the command line
    assert (
        paper_row(row("strict", ("data.labels=strict",)), paper) == {}
    )  # a 6-class run gets no 4-class number


STRICT = ("yes", "probably_yes", "conditional", "no", "probably_no", "middle")


def circa_run(root, name, labels, setting, seed=0, fold=None, acc=0.8, extra=()):
    """A BERT-YN run; data.labels and data.setting come from the composed config unless in `extra`."""
    metrics = {"val/acc": acc, "test/acc": acc, "test/count": 99, "test/macro_f1": 0.5}
    metrics |= {f"test/f1/{slug}": 0.5 for slug in STRICT}
    config = {"data": {"labels": labels, "setting": setting, "fold": fold or 0}}
    write_run(root, name, "circa", "bert", metrics, seed, "circa/bert_yn", extra, fold, config)


def test_circa_strict_row_shows_the_strict_table_and_the_rest_is_listed_as_published(tmp_path):
    circa_run(tmp_path, "strict0", "strict", "matched", seed=0, extra=("data.labels=strict",))
    circa_run(tmp_path, "strict1", "strict", "matched", seed=1, extra=("data.labels=strict",))
    circa_run(tmp_path, "relaxed", "relaxed", "matched")  # the defaults
    text = report.markdown_report(report.find_runs([tmp_path]))
    strict, relaxed = (
        row_cells(text, "circa", "bert_yn (data.labels=strict)"),
        row_cells(text, "circa", "bert_yn"),
    )
    assert strict["paper row"] == "bert_yn (data.labels=strict, data.setting=matched)"
    assert (strict["paper val/acc"], strict["paper test/acc"]) == ("0.836", "0.840")  # Table 10, not 9
    assert (relaxed["paper val/acc"], relaxed["paper test/acc"]) == ("0.884", "0.878")  # Table 9
    assert strict["runs"] == "2" and strict["test/macro_f1"] == "0.500; sd 0.000 over 2 runs"
    assert "paper test/macro_f1" not in strict and "test/count" not in strict
    f1 = table(text, "circa: test/f1/<group>")
    columns = [h for h in f1["bert_yn"] if h.startswith("test/")]  # RELAXED's labels, then STRICT's others
    assert columns == [
        f"test/f1/{s}" for s in ("yes", "no", "conditional", "middle", "probably_yes", "probably_no")
    ]
    assert f1["bert_yn (data.labels=strict)"]["paper test/f1/probably_yes"] == "0.499"
    assert f1["bert_yn (data.labels=strict)"]["paper test/f1/middle"] == "0.426"  # strict, not relaxed 0.282
    assert (
        f1["bert_yn"]["paper test/f1/middle"] == "0.282" and f1["bert_yn"]["paper test/f1/probably_yes"] == ""
    )
    published = table(text, "circa: published, not run here")
    assert "bert_yn (data.labels=strict, data.setting=matched)" not in published
    assert len(published) == 36 - 2
    assert published["bert_dis_yn (data.labels=strict, data.setting=matched)"]["test/f1/middle"] == "0.508"
    loso = published["bert_yn (data.labels=strict, data.setting=unmatched)"]
    assert loso["test/acc"] == "0.812; sd 0.046 over folds [0.718, 0.856]" and loso["val/acc"] == ""


def test_circa_leave_one_scenario_out_row_reads_like_the_papers(tmp_path):
    for fold in range(10):
        acc = 0.80 + 0.01 * fold
        circa_run(
            tmp_path,
            f"fold{fold}",
            "relaxed",
            "unmatched",
            fold=fold,
            acc=acc,
            extra=("data.setting=unmatched",),
        )
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = row_cells(text, "circa", "bert_yn (data.setting=unmatched)")
    assert row["runs"] == "10" and row["paper row"] == "bert_yn (data.labels=relaxed, data.setting=unmatched)"
    assert row["test/acc"] == "0.845; sd 0.030 over 10 runs [0.800, 0.890]"
    assert row["paper test/acc"] == "0.855; sd 0.039 over folds [0.790, 0.902]"
    assert (
        row["val/acc"] == "0.845; sd 0.030 over 10 runs [0.800, 0.890]" and "paper val/acc" not in row
    )  # none published


def test_grice_table5_scales_r_at_1_from_percent_and_keeps_mrr(tmp_path):
    metrics = {
        "val/r@1": 0.95,
        "val/mrr": 0.97,
        "test/r@1": 0.96,
        "test/mrr": 0.98,
        "test/r@1/ignorance": 0.9,
    }
    write_run(
        tmp_path,
        "m",
        "grice_recovery",
        "memnn",
        metrics,
        experiment="grice/table5_memnn",
        config={"scale": "small"},
    )
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = row_cells(text, "grice_recovery", "table5_memnn")
    assert list(row)[2:] == [
        "scale",
        "val/r@1",
        "paper val/r@1",
        "val/mrr",
        "paper val/mrr",
        "test/r@1",
        "paper test/r@1",
        "test/mrr",
        "paper test/mrr",
    ]  # settings, then the paper's order: dev then test, R@1 then MRR
    assert row["scale"] == "small"
    assert (row["paper val/r@1"], row["paper test/r@1"]) == ("0.968", "0.973")  # 96.76 %, 97.29 %
    assert (row["paper val/mrr"], row["paper test/mrr"]) == ("0.983", "0.986")  # 0.9833, 0.9862 as published
    assert "`scale`: paper" in text
    assert table(text, "grice_recovery: test/r@1/<group>")["table5_memnn"]["test/r@1/ignorance"] == "0.900"
    human = table(text, "grice_recovery: published, not run here")["human"]
    assert (human["val/r@1"], human["test/r@1"], human["test/mrr"]) == ("0.990", "0.985", "")


def fid_run(root, name, top_k, corpus, metrics, seed=0):
    config = {
        "retriever": {"top_k": top_k},
        "data": {"corpus": corpus},
        "metrics": {"q_scorer": "facebook/bart-large-cnn"},
    }
    extra = (f"retriever.top_k={top_k}", f"data.corpus={corpus}")
    write_run(root, name, "pragmaticqa", "fid", metrics, seed, extra=extra, config=config)


def test_pragmaticqa_keeps_q_raw_shares_the_r_at_k_column_and_prints_the_corpus(tmp_path):
    fid_run(
        tmp_path, "k5", 5, "fandom_html", {"val/r@5": 0.06, "val/q": -3.8, "test/r@5": 0.05, "test/q": -3.7}
    )
    fid_run(
        tmp_path, "k5wiki", 5, "wikipedia", {"val/r@5": 0.2, "val/q": -2.0, "test/r@5": 0.3, "test/q": -2.1}
    )
    fid_run(tmp_path, "k10", 10, "fandom_html", {"val/r@10": 0.08, "test/r@10": 0.07, "test/q": -3.6})
    text = report.markdown_report(report.find_runs([tmp_path]))
    k5 = row_cells(text, "pragmaticqa", "fid (data.corpus=fandom_html, retriever.top_k=5)")
    assert k5["paper val/q"] == "-3.754" and k5["paper test/q"] == "-3.741"  # a log-likelihood: not scaled
    assert k5["val/r@k"] == "0.060" and k5["paper val/r@k"] == "0.058"  # 5.77 %
    assert k5["paper test/r_all@k"] == "0.042" and k5["test/r_all@k"] == ""  # not logged by the run
    k10 = row_cells(text, "pragmaticqa", "fid (data.corpus=fandom_html, retriever.top_k=10)")
    assert k10["paper test/r@k"] == "0.071" and k10["paper row"] == "fid (retriever.top_k=10)"
    assert k5["data.corpus"] == "fandom_html" and k5["metrics.q_scorer"] == "facebook/bart-large-cnn"
    wiki = row_cells(text, "pragmaticqa", "fid (data.corpus=wikipedia, retriever.top_k=5)")
    assert wiki["data.corpus"] == "wikipedia" and wiki["retriever.top_k"] == "5"
    assert "Fandom HTML passages" in text and "BARTScore with facebook/bart-large-cnn" in text
    published = table(text, "pragmaticqa: published, not run here")
    assert set(published) == {f"fid (retriever.top_k={k})" for k in (1, 20, 50)}
    assert published["fid (retriever.top_k=50)"]["test/q"] == "-3.636"
    assert published["fid (retriever.top_k=1)"]["val/r@k"] == "0.016"


def test_cut_offs_keep_their_own_columns_when_a_row_has_several(tmp_path):
    fid_run(tmp_path, "k5", 5, "fandom_html", {"test/r@1": 0.01, "test/r@5": 0.05})
    text = report.markdown_report(report.find_runs([tmp_path]))
    row = table(text, "pragmaticqa: test")["fid (data.corpus=fandom_html, retriever.top_k=5)"]
    assert row["test/r@1"] == "0.010" and row["test/r@5"] == "0.050" and row["paper test/r@5"] == "0.049"
    assert "test/r@k" not in row and "paper test/r@1" not in row


def test_paper_units_are_checked(tmp_path):
    doc = {
        "source": "s",
        "unit": "percent",
        "metric_units": {"q": "nats"},
        "tasks": {"t": {"rows": {"m": {"test/q": 1}}}},
    }
    (tmp_path / "p.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="unknown unit 'nats'"):
        report.load_paper("t", tmp_path)
    doc["metric_units"] = {"r@k": "fraction"}  # one entry for every cut-off
    doc["tasks"]["t"]["rows"]["m"] = {"test/r@5": 0.5, "test/acc": 50}
    (tmp_path / "p.json").write_text(json.dumps(doc))
    assert report.load_paper("t", tmp_path)["rows"]["m"] == {"test/r@5": 0.5, "test/acc": 0.5}
