"""pragexp.report's published numbers: the shipped paper files load, name existing tasks and presets and are
complete; a paper row is the one whose settings match the run's; a paper's units are checked."""

import json
import re
from pathlib import Path

import pytest

from pragexp import report
from pragexp.report.tables import paper_data, paper_files
from pragexp.reporting.results import parse_row_name

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

    from pragexp.runs.record import DataRecord, ModelRecord, RunRecord, TaskRecord

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
