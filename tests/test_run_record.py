"""run.json: the record of what a run was (pragexp.utils.run_record)."""

from __future__ import annotations

import json

import pytest

from pragexp.utils.run_record import (
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
