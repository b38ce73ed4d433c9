"""The GRICE fidelity tool (pragexp.data.grice.fidelity) on small invented files with known coverage.

The fixture (tests/fixtures/grice_fidelity/) is an invented file in the official schema with its own
lexicon; the "generated" side is derived from it in each test. Only the last test reads the official
dev excerpt, and it skips, saying so, without ../shared.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pragexp.data.grice.fidelity import (
    FIELDS,
    Abstractor,
    compare,
    coverage,
    distractor_strategy,
    render_markdown,
)

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "grice_fidelity"
OFFICIAL = FIX / "official.json"
LEXICON = FIX / "lexicon.json"
OFFICIAL_DEV = REPO.parent / "shared" / "samples" / "grice" / "official_dev"


def load(path=OFFICIAL) -> dict:
    return json.loads(Path(path).read_text())


def write(tmp_path, doc, name="generated.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_abstractor_turns_entity_words_into_slots():
    ab = Abstractor(LEXICON)
    cases = {
        "did Mia put the limes in the den": "did AGENT PUT_BASE the OBJ in the LOC",
        "did you leave them there": "did you PUT_BASE them there",
        "I put them there": "I PUT them there",
        "I don't know if Noah put the pear in the attic": "I don't know if AGENT PUT_BASE the OBJ_SG in the "
        "LOC",
        "she said she walked to the den": "PRON said PRON GO to the LOC",
        "there is a red box in the attic": "there is a COLOUR CONT in the LOC",
        "the pear is in the attic": "the OBJ_SG is in the LOC",
        "I didn't see him": "I didn't see PRON_OBJ",
        "Zed went to the hall": "AGENT GO to the LOC",  # a name the lexicon does not list
        "two or three": "NUM or NUM",
        "where was the woman finally": "where was the woman finally",
    }
    for sentence, template in cases.items():
        assert ab(sentence) == template, sentence
    template, values = ab.split("Mia put the figs in the den")
    assert template == "AGENT PUT the OBJ in the LOC"
    assert values == (("AGENT", "Mia"), ("PUT", "put"), ("OBJ", "figs"), ("LOC", "den"))


def test_coverage_is_frequency_weighted():
    from collections import Counter

    official = Counter({"a": 3, "b": 1})
    assert coverage(official, {"a"}) == 0.75
    assert coverage(official, {"b", "c"}) == 0.25
    assert coverage(Counter(), {"a"}) != coverage(Counter(), {"a"})  # nan: nothing to cover


def test_a_file_against_itself_is_fully_covered():
    rep = compare([OFFICIAL], [OFFICIAL], LEXICON)
    assert rep.coverage == {f: 1.0 for f in FIELDS}
    assert rep.unseen == {f: 0.0 for f in FIELDS}
    assert all(not rep.misses[f] and not rep.extras[f] for f in FIELDS)
    assert rep.sizes["official"] == {"dialogues": 3, "rounds": 9}


def test_one_missing_template_is_reported_exactly(tmp_path):
    doc = load()
    doc["data"]["dialogs"][1]["dialog"][2]["answer"] = "I went to the attic"  # was "... and the hall"
    rep = compare([OFFICIAL], [write(tmp_path, doc)], LEXICON)
    assert rep.coverage["answer"] == pytest.approx(8 / 9)
    assert rep.misses["answer"] == [
        ("I GO to the LOC and the LOC", 1, "I went to the attic and the hall", "official.json#1")
    ]
    assert [row[:2] for row in rep.extras["answer"]] == [("I GO to the LOC", 1)]
    assert rep.unseen["answer"] == pytest.approx(1 / 9)
    for f in FIELDS:
        if f != "answer":
            assert rep.coverage[f] == 1.0, f


def test_a_frequent_missing_template_weighs_more(tmp_path):
    doc = load()
    for d, r in ((0, 1), (2, 2)):  # both rounds answered "I didn't"
        doc["data"]["dialogs"][d]["dialog"][r]["answer"] = "no"
    rep = compare([OFFICIAL], [write(tmp_path, doc)], LEXICON)
    assert rep.coverage["answer"] == pytest.approx(7 / 9)
    (miss,) = rep.misses["answer"]
    assert miss[:2] == ("I didn't", 2)


def test_missing_qa_and_distractor_templates(tmp_path):
    doc = load()
    doc["data"]["dialogs"][2]["question"][0] = {"question": "how many limes are in the den", "answer": "two"}
    doc["data"]["dialogs"][1]["dialog"][0]["option"][0] = (
        "the pear is in the porch"  # was "... in the red box"
    )
    rep = compare([OFFICIAL], [write(tmp_path, doc)], LEXICON)
    assert rep.coverage["qa_question"] == pytest.approx(2 / 3)
    assert rep.coverage["qa_answer"] == pytest.approx(2 / 3)  # "no" is never generated now
    assert rep.misses["qa_question"][0][:2] == ("does the woman know how many are the OBJ", 1)
    assert rep.coverage["distractor"] == pytest.approx(26 / 27)
    assert rep.misses["distractor"][0][:2] == ("the OBJ_SG is in the COLOUR CONT", 1)


def test_groups_per_condition_and_labels_from_generated_tags(tmp_path):
    official = load()
    for d in official["data"]["dialogs"]:
        d["test_condition"] = "re"
    generated = copy.deepcopy(official)
    for d in generated["data"]["dialogs"]:
        for r in d["dialog"]:
            r["implicature"], r["subtopic"] = "relevance", "agent_location"
    rep = compare([write(tmp_path, official, "off.json")], [write(tmp_path, generated)], LEXICON)
    assert rep.grouped["condition=relevance"]["question"] == (1.0, 9)
    assert rep.grouped["type=relevance/subtopic=agent_location"]["answer"] == (1.0, 9)
    assert rep.official_dist["own_type_rounds_per_dialogue"] == {"3": 3}
    text = render_markdown(rep)
    assert "| condition=relevance | 100.0% (9)" in text


def test_distractor_strategies():
    ab = Abstractor(LEXICON)
    assert distractor_strategy(ab, "Mia was in the den", "Mia was not in the den") == "polarity flip"
    assert (
        distractor_strategy(
            ab, "I went to the attic and then the hall", "I went to the hall and then the attic"
        )
        == "order swap"
    )
    assert (
        distractor_strategy(ab, "three of the figs are in the hall", "all of the figs are in the hall")
        == "quantity swap"
    )
    assert (
        distractor_strategy(ab, "the pear is in the attic", "I am not sure where the pear is")
        == "known/unsure swap"
    )
    assert distractor_strategy(ab, "the pear is in the attic", "the pear is in the den") == "other location"
    assert distractor_strategy(ab, "Mia was in the den", "Noah was in the den") == "other agent"


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pragexp.data.grice.fidelity", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
    )


def test_cli_writes_the_report_and_json(tmp_path):
    doc = load()
    doc["data"]["dialogs"][1]["dialog"][2]["answer"] = "I went to the attic"
    gen = write(tmp_path, doc)
    res = _cli(
        "--official", str(OFFICIAL), "--generated", str(gen), "--lexicon", str(LEXICON),
        "--out", str(tmp_path / "r.md"), "--json", str(tmp_path / "r.json"), cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    report = (tmp_path / "r.md").read_text()
    assert "| answer | 88.9% |" in report and "`I GO to the LOC and the LOC`" in report
    figures = json.loads((tmp_path / "r.json").read_text())
    assert figures["coverage"]["answer"] == pytest.approx(8 / 9)
    assert figures["official_misses"]["answer"][0][0] == "I GO to the LOC and the LOC"


def test_cli_names_file_dialogue_and_field_on_bad_input(tmp_path):
    doc = load()
    del doc["data"]["dialogs"][2]["dialog"][1]["option"]
    bad = write(tmp_path, doc, "bad.json")
    res = _cli("--official", str(OFFICIAL), "--generated", str(bad), cwd=tmp_path)
    assert res.returncode == 2
    assert "bad.json" in res.stderr and "dialog_id 2" in res.stderr and "round 1" in res.stderr
    assert "'option'" in res.stderr
    res = _cli("--official", str(tmp_path / "missing.json"), "--generated", str(bad), cwd=tmp_path)
    assert res.returncode == 2 and "missing.json" in res.stderr


@pytest.mark.slow
def test_default_generator_covers_the_official_dev_excerpt(tmp_path):
    files = sorted(OFFICIAL_DEV.glob("impl_dial_v0.1_*.json"))
    if len(files) != 5:
        pytest.skip(f"../shared/samples not present: {OFFICIAL_DEV} (the official dev excerpt)")
    from pragexp.data.grice.generator import write_dataset

    gen = tmp_path / "test.json"
    write_dataset(gen, "test", 5000, 0)
    rep = compare(files, [gen])
    for f in FIELDS:
        assert rep.coverage[f] >= 0.95, (f, rep.coverage[f], rep.misses[f][:3])
