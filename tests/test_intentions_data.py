"""The intentions reader and data module: the release's quirks on an invented fixture, and the real
excerpts."""

import json

import pytest
from conftest import INTENTIONS_FIXTURE, SAMPLES, needs_samples

from pragexp.data.intentions.datamodule import IntentionsDataModule
from pragexp.data.intentions.io import read_intentions_csv
from pragexp.utils.errors import DataFormatError


def test_reader_repairs_the_shifted_row_fixes_mojibake_and_skips_what_it_cannot_place():
    items, report = read_intentions_csv(INTENTIONS_FIXTURE)
    assert report.rows_read == 7 and len(items) == 6
    (repaired,) = report.repaired
    assert repaired["item"] == "maxims 2" and "are you sure" in repaired["what"]
    zoe = next(i for i in items if i.phenomenon == "maxims" and i.item_id == "2")
    assert zoe.reply_literal == "Mars, really? What was it like?"
    assert zoe.reply_true == "Alright, I will not ask again."
    assert zoe.question == "Why has Zoe responded like this?"
    assert "why the character" in zoe.task_line and zoe.task_line.endswith("The answer options are 1 or 2.")
    (skipped,) = report.skipped
    assert skipped["line"] == 56 and "fields" in skipped["reason"]
    assert report.mojibake_fixed == [{"line": 20, "field": "turn2_response_from_literal_intention"}]
    toast = next(i for i in items if i.phenomenon == "irony")
    assert toast.reply_literal == "That's kind of you to say, thank you!"


def test_missing_column_names_the_file_and_the_column(tmp_path):
    lines = INTENTIONS_FIXTURE.read_text(encoding="utf-8").split("\n")
    bad = tmp_path / "no_reply.csv"
    bad.write_text("\n".join([lines[0].replace("turn2_response_from_true_intention", "reply"), *lines[1:]]))
    with pytest.raises(DataFormatError) as err:
        read_intentions_csv(bad)
    assert str(bad) in str(err.value) and "turn2_response_from_true_intention" in str(err.value)
    assert ":1 " in str(err.value)


def test_undecodable_bytes_name_the_line(tmp_path):
    bad = tmp_path / "latin1.csv"
    data = INTENTIONS_FIXTURE.read_bytes().replace(b"Tom is carrying", b"Tom\xe9 is carrying", 1)
    bad.write_bytes(data)
    with pytest.raises(DataFormatError, match=r"latin1.csv:2: not UTF-8"):
        read_intentions_csv(bad)


def test_datamodule_groups_describes_and_reports(tmp_path):
    dm = IntentionsDataModule(path=str(INTENTIONS_FIXTURE), report_dir=str(tmp_path), eval_batch_size=4)
    dm.setup("test")
    assert dm.group_names == ("indirectspeech", "irony", "maxims", "metaphor")
    batch = next(iter(dm.test_dataloader()))
    assert batch["index"].tolist() == [0, 1, 2, 3] and batch["group"].tolist() == [0, 0, 1, 2]
    assert dm.describe("test", 2)["phenomenon"] == "irony"
    report = json.loads((tmp_path / "data_report.json").read_text())
    assert (report["rows_read"], report["repaired"], report["skipped"], report["items"]) == (7, 1, 1, 6)
    assert report["per_phenomenon"] == {"indirectspeech": 2, "irony": 1, "maxims": 2, "metaphor": 1}
    only = IntentionsDataModule(path=str(INTENTIONS_FIXTURE), phenomena=["irony"])
    only.setup("test")
    assert len(only.datasets["test"]) == 1 and only.group_names == ("irony",)


def test_no_path_says_what_to_set():
    with pytest.raises(ValueError, match="data.path"):
        IntentionsDataModule().setup("test")


@needs_samples
def test_real_excerpts_read_as_released():
    sample, report = read_intentions_csv(SAMPLES / "intentions" / "sample.csv")
    assert sorted(i.phenomenon for i in sample) == ["indirectspeech", "irony", "maxims", "metaphor"]
    assert not report.skipped and not report.repaired
    dev, report = read_intentions_csv(SAMPLES / "intentions" / "dev.csv")
    assert len(dev) == 45 and sum(i.phenomenon == "irony" for i in dev) == 25
    assert report.mojibake_fixed and all(i.reply_true and i.reply_literal and i.question for i in dev)
