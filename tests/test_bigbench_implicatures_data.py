"""BIG-bench implicatures: a local JSON-lines copy in the hub format (tests/fixtures/bigbench_implicatures/),
bad records, and the hub loader (offline: a clear error naming the setting; a stand-in hub: same checks)."""

import json

import pytest
from conftest import FIXTURES

from pragexp.data.bigbench_implicatures.io import HUB_CONFIG, HUB_NAME, load_hub, read_jsonl
from pragexp.utils.errors import DataFormatError

FIXTURE = FIXTURES / "bigbench_implicatures" / "implicatures.jsonl"


def records():
    return [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def write(tmp_path, rows):
    path = tmp_path / "implicatures.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_local_copy_as_released():
    examples, report = read_jsonl(FIXTURE)
    assert report.rows_read == 4 and [e.idx for e in examples] == [0, 1, 2, 3]
    assert [e.true_option for e in examples] == ["yes", "no", "no", "yes"]
    assert [e.true_index for e in examples] == [0, 1, 1, 0] and examples[0].options == ("yes", "no")
    assert examples[2].context.startswith(
        "Does Speaker 2's answer mean yes or no? \n\nQ: Speaker 1: 'Can your cat"
    )
    assert "won\u2019t" in examples[2].context and examples[2].context.endswith(" \nA:")


def test_bad_records_name_the_line_and_the_field(tmp_path):
    cases = {
        "multiple_choice_scores": [
            ("multiple_choice_scores", [1, 1]),
            ("multiple_choice_scores", [0, 0]),
            ("multiple_choice_scores", [1]),
            ("multiple_choice_scores", ["1", 0]),
        ],
        "multiple_choice_targets": [
            ("multiple_choice_targets", ["yes"]),
            ("multiple_choice_targets", "yes/no"),
        ],
        "targets": [("targets", ["no"])],  # scores say yes
        "inputs": [("inputs", None), ("inputs", " ")],
        "idx": [("idx", "seven")],
    }
    for field, edits in cases.items():
        for key, value in edits:
            rows = records()
            rows[1] = {**rows[0], key: value}
            path = write(tmp_path, rows)
            with pytest.raises(DataFormatError, match=rf"implicatures.jsonl:2 \(field '{field}'\)"):
                read_jsonl(path)


def test_broken_json_and_missing_file(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text(FIXTURE.read_text(encoding="utf-8").replace('"idx": 2}', '"idx": 2', 1), encoding="utf-8")
    with pytest.raises(DataFormatError, match=r"broken.jsonl:3: not valid JSON"):
        read_jsonl(path)
    with pytest.raises(FileNotFoundError, match="data.path="):
        read_jsonl(tmp_path / "absent.jsonl")


def test_float_scores_and_no_idx_are_accepted(tmp_path):
    rows = [{k: v for k, v in r.items() if k != "idx"} for r in records()]
    rows[0]["multiple_choice_scores"] = [1.0, 0.0]
    examples, _ = read_jsonl(write(tmp_path, rows))
    assert [e.idx for e in examples] == [1, 2, 3, 4] and examples[0].true_index == 0  # line numbers


def test_offline_hub_load_says_what_to_set_instead(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError) as err:
        load_hub(HUB_NAME, HUB_CONFIG, split="validation")
    message = str(err.value)
    assert "data.path=<a local JSON-lines copy>" in message and "HF_DATASETS_OFFLINE" in message
    assert "'tasksource/bigbench', config 'implicatures', split 'validation'" in message
    assert "Traceback" not in message and "\n" not in message and err.value.__cause__ is not None


def test_hub_records_go_through_the_same_checks(monkeypatch):
    import datasets

    calls = []

    def stand_in(name, config, split):
        calls.append((name, config, split))
        return datasets.Dataset.from_list(records())

    monkeypatch.setattr(datasets, "load_dataset", stand_in)
    examples, report = load_hub("someone/bigbench-copy", "implicatures", split="train")
    assert calls == [("someone/bigbench-copy", "implicatures", "train")]
    assert report.source == "hub:someone/bigbench-copy/implicatures[train]" and len(examples) == 4
    assert [e.true_option for e in examples] == ["yes", "no", "no", "yes"]

    bad = records()
    bad[2]["multiple_choice_scores"] = [1, 1]
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: datasets.Dataset.from_list(bad))
    with pytest.raises(DataFormatError, match=r"\(record 2, field 'multiple_choice_scores'\)"):
        load_hub()
