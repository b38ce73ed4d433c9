"""run.json: the record of what a run was (pragexp.runs.record)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, choices, compose_config, migration
from hydra.utils import get_class
from omegaconf import OmegaConf

from pragexp.reporting.papers import read_paper_table
from pragexp.reporting.results import parse_row_name
from pragexp.run import run
from pragexp.runs.record import (
    SCHEMA,
    DataRecord,
    Headline,
    LLMRecord,
    ModelRecord,
    Prompting,
    RunRecord,
    RunRecordError,
    Settings,
    TaskRecord,
    read_run_record,
    write_run_record,
)


def llm_record() -> RunRecord:
    prompting = Prompting(group="circa", template="qa", shots=2, scoring="sum", chat=True)
    return RunRecord(
        task=TaskRecord("circa", [Headline("test/acc", "Circa RELAXED acc", 0.25)], None, "circa.json"),
        data=DataRecord(
            "circa", "release", {"all": ["circa-data.tsv"]}, "test", "relaxed", None, {"setting": "matched"}
        ),
        model=ModelRecord(
            "llm", "tiny 2-shot", "none", LLMRecord("tiny", "hf", None, "float32", None, prompting)
        ),
        items=12,
        seed=0,
        settings=Settings(["llm.dtype=float32"], ["judge=gpt4"]),
    )


def test_round_trip(tmp_path):
    record = llm_record()
    write_run_record(tmp_path, record)
    assert read_run_record(tmp_path) == record
    assert json.loads((tmp_path / "run.json").read_text())["model"]["llm"]["prompting"]["shots"] == 2


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda o: o["model"]["llm"]["prompting"].update(shots="two"), "model.llm.prompting.shots"),
        (lambda o: o["task"]["headline"][0].pop("key"), r"task.headline\[0\].key: missing"),
        (lambda o: o["data"].update(source="ftp"), "data.source"),
        (lambda o: o["data"].update(colour="red"), "data.colour: not a field"),
        (lambda o: o.update(items=True), "items"),
        (lambda o: o["data"]["files"].update(test="dev.jsonl"), "data.files.test: expected a list"),
    ],
)
def test_bad_file_names_file_and_field(tmp_path, change, field):
    obj = llm_record().to_json()
    change(obj)
    (tmp_path / "run.json").write_text(json.dumps(obj))
    with pytest.raises(RunRecordError, match=rf"{tmp_path / 'run.json'}: {field}"):
        read_run_record(tmp_path)


def test_not_json_named(tmp_path):
    (tmp_path / "run.json").write_text("{")
    with pytest.raises(RunRecordError, match="run.json: not JSON"):
        read_run_record(tmp_path)


@pytest.mark.parametrize(
    "schema, said",
    [
        (1, "migrate the run folder once with `python experiments/migrate_runs.py"),
        (SCHEMA + 1, "update pragexp"),
    ],
)
def test_another_schema_is_refused_naming_the_file_the_schema_and_what_to_do(tmp_path, schema, said):
    (tmp_path / "run.json").write_text(json.dumps({**llm_record().to_json(), "schema": schema}))
    with pytest.raises(RunRecordError) as refused:
        read_run_record(tmp_path)
    assert str(refused.value).startswith(
        f"{tmp_path / 'run.json'}: schema {schema}: this pragexp reads run.json"
    )
    assert said in str(refused.value)
    older = llm_record().to_json()
    del older["schema"]  # schema 1 wrote none
    (tmp_path / "run.json").write_text(json.dumps(older))
    with pytest.raises(RunRecordError, match=r"run.json: schema 1: .*experiments/migrate_runs.py"):
        read_run_record(tmp_path)


def test_a_folder_without_run_json_is_refused_naming_it_and_the_migration_script(tmp_path):
    with pytest.raises(RunRecordError, match=rf"{tmp_path}: no run.json .*experiments/migrate_runs.py"):
        read_run_record(tmp_path)


# -- every task declares its headline, and writes it in run.json ---------------------------------------------
LLM = ["model=llm", "llm=tiny", "trainer.limit_test_batches=1"]
RUNS = {  # one cheap run per task (an LLM evaluated, the GRICE readers trained one fast_dev_run step)
    **{task: LLM for task in choices("task")},
    "grice_recovery": ["model=memnn", "debug=fdr"],
    "grice_qa": ["model=memnn", "debug=fdr"],
    "intentions_reply": LLM,  # the embedding judge: MiniLM, shipped offline
    "multiprageval": [*LLM, "data.languages=[english]"],  # one batch holds every type (the literal column's)
    "bigtom": [*LLM, "data.eval_batch_size=75"],  # one batch holds every condition (the headline's pairs)
    "opentom": [
        *LLM,
        "data.eval_batch_size=19",
    ],  # one batch holds a story's 19 questions: every headline genre
}
HEADLINE = {  # the headline columns a run on the tests' data (default settings) takes
    "grice_recovery": ["GRICE recovery R@1"],
    "grice_qa": ["GRICE QA acc"],
    "circa": ["Circa RELAXED acc"],
    "pragmaticqa": ["PragmatiCQA F1_lit", "PragmatiCQA F1_prag"],
    "intentions_reply": ["Intentions gen. acc"],
    "intentions_mc": ["Intentions MC acc"],
    "hu_pragmatics": ["Hu et al. acc"],
    "ludwig": ["LUDWIG 0-shot acc", "LUDWIG best-k acc"],
    "bigbench_implicatures": ["BIG-bench implicatures acc"],
    "multiprageval": ["MultiPragEval maxims acc", "MultiPragEval literal acc"],
    "tomato": ["ToMATO acc", "ToMATO false-belief acc"],
    "bigtom": ["BigToM fwd-belief TB∧FB", "BigToM fwd-action TB∧FB", "BigToM bwd-belief TB∧FB"],
    "hitom": ["Hi-ToM acc", "Hi-ToM 4th-order acc", "Hi-ToM joint acc (orders 0-4)"],
    "opentom": ["OpenToM Loc-coarse 1st-order F1", "OpenToM multi-hop 1st-order F1", "OpenToM attitude F1"],
    "nli": [],
    "boolq": [],
}


def test_every_task_config_declares_a_checked_headline():
    assert sorted(HEADLINE) == choices("task")
    for task in choices("task"):
        cfg = compose_config([f"task={task}"], ROOT / "outputs" / "unused")
        declares = OmegaConf.to_container(cfg.declares)
        assert (
            {"headline", "section", "paper"}
            <= set(declares)
            <= {"headline", "section", "paper", "paper_keys"}
        )
        for headline in declares["headline"]:
            Headline(**{k: v for k, v in headline.items() if k != "when"})
        if declares["paper"]:  # in its dataset's package (pragexp.report finds it there)
            dataset = get_class(cfg.data._target_).dataset
            path = ROOT / "pragexp" / "data" / dataset / declares["paper"]
            table = read_paper_table(path, task) or {"rows": {}}
            # every key its paper's settings and rows name is one whose value run.json records
            named = {c.partition("=")[0] for row in table["rows"] for c in parse_row_name(row)[1]}
            assert named | set(table.get("setting_keys", {})) <= set(declares.get("paper_keys", [])), task


def hydra_files(cfg) -> None:
    """The .hydra folder a Hydra app writes (config without `hydra`, hydra.yaml, overrides.yaml): what the
    runs made before run.json kept."""
    folder = Path(cfg.paths.output_dir) / ".hydra"
    folder.mkdir(parents=True, exist_ok=True)
    plain = OmegaConf.to_container(cfg)
    hydra = plain.pop("hydra")
    (folder / "config.yaml").write_text(OmegaConf.to_yaml(plain))
    (folder / "hydra.yaml").write_text(OmegaConf.to_yaml({"hydra": hydra}))
    (folder / "overrides.yaml").write_text(OmegaConf.to_yaml(hydra["overrides"]["task"]))


@pytest.mark.slow
@pytest.mark.parametrize("task", sorted(HEADLINE))
def test_every_task_writes_run_json_and_the_migration_script_writes_the_same(task, make_config):
    """A run of each task, and what experiments/migrate_runs.py makes of its folder without its run.json (from
    .hydra), or with the run.json of schema 1 (the fields added since, from the config)."""
    cfg = make_config([f"task={task}", *RUNS[task]], name="train" if "debug=fdr" in RUNS[task] else "eval")
    metrics = run(cfg)
    out = Path(cfg.paths.output_dir)
    record = read_run_record(out)
    assert [h.title for h in record.task.headline] == HEADLINE[task]
    assert all(h.key in metrics for h in record.task.headline)
    assert record.task.name == task and record.items == metrics.get("test/count", record.items)
    assert record.model.row == ("memnn" if "model=memnn" in RUNS[task] else "tiny 0-shot")
    assert (record.task.monitor, record.task.monitor_mode) == (cfg.monitor, cfg.monitor_mode)
    hydra_files(cfg)
    (out / "run.json").unlink()
    assert migration().migrated(out) == (record, "derived from .hydra")  # tiny has no weight files: no digest
    older = record.to_json()  # a run.json of schema 1, written before runs declared their monitored metric
    del older["task"]["monitor"], older["task"]["monitor_mode"], older["task"]["paper_settings"]
    del older["model"]["one_label"], older["data"]["sampling_unit"], older["schema"]
    if (older["model"]["llm"] or {}).get("prompting"):
        del older["model"]["llm"]["prompting"]["generates"]
    (out / "run.json").write_text(json.dumps(older))
    assert migration().migrated(out) == (record, f"schema 1 -> {SCHEMA}")  # the fields added since: config


def test_benchmarks_scored_beside_training_are_not_a_setting_of_the_run():
    from pragexp.runs.settings import split_settings

    settings = split_settings(
        [
            "callbacks.benchmarks.names=[ludwig]",
            "+callbacks.benchmarks.overrides.ludwig.data.test_file=x.csv",
            "callbacks.early_stopping.patience=2",
            "llm.finetune=lora",
        ]
    )
    assert settings.other == ["callbacks.early_stopping.patience=2"] and settings.model == [
        "llm.finetune=lora"
    ]
