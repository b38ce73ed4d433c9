"""MultiPragEval: its test_suite.csv read as released (CRLF records, LF in cells, no final newline, the cell
kept byte for byte), bad rows named by file, row and field, and runs on the one route scored by the option
letter's log-likelihood and by a generated reply, with accuracy per language, type, their pairs and the maxims
apart from the literal control, and the share of each letter chosen."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from conftest import FIXTURES, SAMPLES, needs_samples, predictions

from pragexp.data.multiprageval.io import LETTERS, read_units
from pragexp.run import run
from pragexp.utils.errors import DataFormatError

FIXTURE = FIXTURES / "multiprageval" / "test_suite.csv"


def raw_rows(path: Path) -> list[list[str]]:
    """The file split by hand: records at CRLF, cells at commas outside quotes (no csv module)."""
    text = path.read_bytes().decode("utf-8")
    rows, row, cell, quoted, i = [], [], "", False, 0
    while i < len(text):
        c = text[i]
        if quoted and c == '"' and text[i + 1 : i + 2] == '"':
            cell, i = cell + '"', i + 2
            continue
        if c == '"':
            quoted = not quoted
        elif not quoted and c == ",":
            row, cell = [*row, cell], ""
        elif not quoted and text.startswith("\r\n", i):
            rows, row, cell, i = [*rows, [*row, cell]], [], "", i + 2
            continue
        else:
            cell += c
        i += 1
    return [*rows, [*row, cell]]


def test_every_unit_read_as_released():
    data = FIXTURE.read_bytes()
    assert b"\r\n" in data and not data.endswith(b"\n")  # CRLF records, no final newline
    units = read_units(FIXTURE)
    rows = raw_rows(FIXTURE)[1:]
    assert len(units) == 4 * len(rows) == 40
    by_key = {(u.row_id, u.language): u for u in units}
    for row in rows:
        for language, cell in zip(("english", "german", "korean", "chinese"), row[2:6], strict=True):
            unit = by_key[(int(row[0]), language)]
            assert unit.prompt == cell and "\r" not in unit.prompt  # the cell byte for byte, LF inside
            assert unit.answer == row[6] and unit.type == row[1] and len(unit.options) == 5
    assert by_key[(8, "korean")].prompt.startswith("  ") and by_key[(4, "english")].prompt.endswith("\n")
    assert "Choose" not in by_key[(3, "english")].prompt  # no instruction line: read all the same
    assert by_key[(5, "german")].options[1].endswith("6.")  # trailing spaces off the option's text only
    assert (
        read_units(FIXTURE, ["korean"])[0].language == "korean" and len(read_units(FIXTURE, ["korean"])) == 10
    )


def rewrite(tmp_path, row_id: int, column: str, change) -> Path:
    with FIXTURE.open(encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    for record in records:
        if record["id"] == str(row_id):
            record[column] = change(record[column])
    path = tmp_path / "test_suite.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, list(records[0]), lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
        writer.writeheader()
        writer.writerows(records)
    return path


@pytest.mark.parametrize(
    ("column", "change", "message"),
    [
        ("german", lambda cell: cell.replace("\n(C)", "\n(C) and").replace("(C)", "C"), "five options"),
        ("korean", lambda cell: cell + "\n(F) 또 다른 것.", "five options"),
        ("answer", lambda _: "F", "gold letter A-E"),
        ("type", lambda _: "politeness", "one of quantity"),
    ],
)
def test_a_bad_row_names_the_file_the_row_and_the_field(tmp_path, column, change, message):
    path = rewrite(tmp_path, 6, column, change)
    with pytest.raises(DataFormatError, match=message) as err:
        read_units(path)
    assert str(path) in str(err.value) and "row id '6'" in str(err.value) and repr(column) in str(err.value)


def test_an_unknown_language_or_a_missing_column_is_named(tmp_path):
    with pytest.raises(ValueError, match="spanish"):
        read_units(FIXTURE, ["english", "spanish"])
    path = tmp_path / "test_suite.csv"
    path.write_text("id,type,english,answer\r\n1,quantity,x,A", encoding="utf-8")
    with pytest.raises(DataFormatError, match="korean"):
        read_units(path, ["english", "korean"])


def test_letters_scored_per_language_type_and_maxims_with_the_share_of_each_letter(make_config):
    cfg = make_config(["task=multiprageval", "data.languages=[english,korean]"], name="eval")
    metrics = run(cfg)
    records = predictions(cfg)
    assert metrics["test/count"] == len(records) == 20
    assert all(
        r["continuations"] == list(LETTERS) for r in records
    )  # the letter after the cell, one user turn
    assert all("Sam asks Ana" in r["prompt"] or "민수" in r["prompt"] for r in records)
    maxims = [r["correct"] for r in records if "maxims" in r["groups"]]
    assert len(maxims) == 16 and metrics["test/acc/maxims"] == pytest.approx(sum(maxims) / 16)
    korean_literal = [r["correct"] for r in records if "korean:literal" in r["groups"]]
    assert metrics["test/acc/korean:literal"] == pytest.approx(sum(korean_literal) / 2)
    assert metrics["test/acc_n/english:maxims"] == 8 and "test/acc_stderr/english:maxims" in metrics
    assert {"test/acc/english", "test/acc/quantity", "test/acc/english:quantity"} <= set(metrics)
    assert not any(key.startswith("test/acc/german") for key in metrics)
    shares = [metrics[f"test/chosen/{x}"] for x in LETTERS]
    assert sum(shares) == pytest.approx(1.0) and metrics["test/chosen/none"] == 0.0
    assert max(shares) == pytest.approx(
        sum(r["predicted"] == shares.index(max(shares)) for r in records) / 20
    )


def test_generated_replies_read_back_to_a_letter(make_config):
    cfg = make_config(
        ["task=multiprageval", "data.languages=[chinese]", "prompt.scoring=generate"], name="eval"
    )
    metrics = run(cfg)
    records = predictions(cfg)
    answered = [r for r in records if r["predicted"] >= 0]
    assert metrics["test/chosen/none"] == pytest.approx(1 - len(answered) / len(records))
    assert all("reply" in r for r in records)


@needs_samples
def test_the_shared_sample_reads_whole():
    units = read_units(SAMPLES / "multiprageval" / "test_suite_sample.csv")
    assert len(units) == 400 and len({u.row_id for u in units}) == 100
    for kind, first in (
        ("quantity", 1),
        ("quality", 61),
        ("relation", 121),
        ("manner", 181),
        ("literal", 241),
    ):
        ids = sorted({u.row_id for u in units if u.type == kind})
        assert ids[0] == first and len(ids) == 20
    # gold letters in runs of twelve ids, the same in every type block
    assert all(u.answer == LETTERS[((u.row_id - 1) % 60) // 12] for u in units)
    assert all(u.options[4] for u in units)
