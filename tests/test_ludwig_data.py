"""LUDWIG readers: pairs, templates and type labels on invented fixtures in the released formats
(tests/fixtures/ludwig/: CRLF records, quoted \\r\\n, curly quotes, an empty field, explanations), bad input,
and the real excerpts when they are there."""

import csv

import numpy as np
import pytest
from conftest import FIXTURES, SAMPLES, needs_samples

from pragexp.data.ludwig.datamodule import LudwigDataModule
from pragexp.data.ludwig.io import (
    authors_label,
    authors_types,
    match_types,
    read_ludwig,
    read_pairs,
    read_templates,
    read_type_labels,
    split_implicature,
)
from pragexp.utils.errors import DataFormatError

ROOT = FIXTURES / "ludwig"
TEST = ROOT / "test_conversational_implicatures.csv"
TEMPLATES = ROOT / "prompt_templates.txt"


def copy_with(tmp_path, source, old, new):
    data = source.read_bytes()
    assert old.encode() in data
    target = tmp_path / source.name
    target.write_bytes(data.replace(old.encode(), new.encode(), 1))
    return target


def test_pairs_labels_explanations_and_skips():
    pairs, report = read_pairs(TEST)
    assert report.rows_read == 8 and len(pairs) == 6
    # The authors keep 7 (the pair with an empty response too): each pair keeps its row among theirs.
    assert report.authors_rows == 7 and [p.row for p in pairs] == [0, 1, 2, 4, 5, 6]
    assert report.skipped == [
        {"line": 9, "reason": "field 'Response utterance' is empty"},
        {"line": 10, "reason": "field 'Implicature' is neither yes nor no: 'Maybe.'"},
    ]
    train = pairs[0]
    # A quoted utterance ending in \r\n: stripped; the pair keeps its first line.
    assert (train.utterance, train.line, train.source) == ("Will the train be on time?", 2, TEST.name)
    assert (train.label, train.explanation, train.implicature) == (
        "no",
        "It will be delayed.",
        "No. It will be delayed.",
    )
    assert pairs[1].response == "I could not eat another spoonful."  # a leading space, stripped
    # A line break inside the text is kept (as \n), with the release's indentation.
    assert (
        pairs[2].utterance == "Are you taking your little\n           sister to the fair?"
        and pairs[2].line == 5
    )
    assert pairs[2].implicature == "Yes." and pairs[2].explanation == ""
    assert pairs[3].response == "I saw you eyeing the cheesecake, don\u2019t deny it."  # curly quote kept
    assert (pairs[3].label, pairs[3].explanation) == ("yes", "I will order the cheesecake")
    assert (pairs[4].label, pairs[4].explanation) == ("yes", "But he is not the tallest in the family.")
    assert (pairs[5].label, pairs[5].explanation) == ("no", "It was boring.")  # "No.It was boring."
    assert {(t["line"], t["field"]) for t in report.trimmed} == {
        (2, "Context utterance"),
        (4, "Response utterance"),
        (5, "Context utterance"),
        (5, "Implicature"),
    }
    assert not any("\r" in p.utterance + p.response + p.implicature for p in pairs)


def test_as_the_authors_models_read_them():
    pairs, _ = read_pairs(TEST, as_authors_read=True)
    # src/dataset.py strips only "\n" from the ends: a trailing "\r" and a leading space stay.
    assert pairs[0].utterance == "Will the train be on time?\r"
    assert pairs[1].response == " I could not eat another spoonful."
    assert pairs[2].utterance == "Are you taking your little\r\n           sister to the fair?\r"
    assert [p.label for p in pairs] == ["no", "no", "yes", "yes", "yes", "no"]


def test_dev_file_with_crlf_records():
    release = read_ludwig(ROOT)
    assert len(release.dev) == 5 and release.dev_report.rows_read == 5 and not release.dev_report.skipped
    frost = release.dev[2]
    assert frost.utterance == "Did the plants survive the frost?" and frost.implicature == "No."
    assert frost.response == "I\u2019m afraid the basil didn\u2019t make it." and frost.line == 4
    assert release.dev[3].line == 7 and release.dev[3].implicature == "Yes."  # "Yes. " trimmed
    assert release.dev[4].explanation == "It is in your inbox."
    assert len(release.test) == 6 and len(release.templates) == 3 and len(release.contrastive_templates) == 1


def test_split_implicature():
    assert split_implicature("Yes. But it does not arrive on time.") == (
        "yes",
        "But it does not arrive on time.",
    )
    assert split_implicature("No . I dont throw away") == ("no", "I dont throw away")
    assert split_implicature(" no.\r\n") == ("no", "")
    assert split_implicature("Nope.") is None and split_implicature("Not really.") is None
    assert split_implicature("Perhaps yes.") is None


def test_the_authors_label_rule():
    # src/dataset.py: "yes" in the first five characters, else "no" in the first four, else dropped.
    assert authors_label("Not now.") == "no" and authors_label("Nope.") == "no"
    assert authors_label(" Yes.") == "yes" and authors_label("Yes, no.") == "yes"
    assert authors_label("Maybe.") is None and authors_label("Perhaps yes.") is None
    assert authors_label("I know.") is None  # "no" past the fourth character


def test_an_implicature_the_authors_read_as_no_is_kept(tmp_path):
    # The release's row 209 is "Not now.": no yes/no word at its start, "no" by the authors' rule.
    not_now = copy_with(tmp_path, TEST, "spoonful.,No.", "spoonful.,Not now.")
    pairs, report = read_pairs(not_now)
    assert len(pairs) == 6 and report.authors_rows == 7
    assert (pairs[1].label, pairs[1].explanation, pairs[1].implicature) == ("no", "Not now.", "Not now.")


def authors_demonstrations(folder, shots: int, seed: int) -> dict[str, list[str]]:
    """{test utterance: the utterances of its demonstrations} as the authors' ParticularisedImplicatureDataset
    reads and draws them (src/dataset.py: their filter, `_process_text`, one generator over the kept rows)."""

    def kept(name):
        with open(folder / name, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if authors_label(r["Implicature"])]
        return [r["Context utterance"].strip("\n") for r in rows]

    test, dev = kept("test_conversational_implicatures.csv"), kept("dev_conversational_implicatures.csv")
    rng = np.random.default_rng(seed)
    return {u: [dev[j] for j in rng.choice(range(len(dev)), shots, replace=False)] for u in test}


def test_every_pair_shows_the_authors_draw_for_its_row():
    module = LudwigDataModule(path=str(ROOT), shots=2, seed=3, as_authors_read=True)
    module.setup()
    theirs = authors_demonstrations(ROOT, 2, 3)
    examples = module.datasets["test"]
    assert len(examples) == 6 and len(theirs) == 7  # theirs hold the pair with an empty response too
    for example in examples:
        item = example["item"]
        shown = [d.fields["utterance"] for d in item.demonstrations]
        assert shown == theirs[item.fields["utterance"]]


def test_types_as_the_authors_look_them_up_or_matched():
    pairs, _ = read_pairs(TEST)
    labels, _ = read_type_labels(ROOT / "type_labels.csv")
    # By utterance alone: the label file's quoted utterances end in a line break that the pairs' lookup key
    # does not have (the train, the fair): "Other" there; Hyperbole is a type like the others here.
    assert authors_types(pairs, labels) == {
        0: "Other",
        1: "Generalised",
        2: "Other",
        3: "Particularised",
        4: "Hyperbole",
        5: "Particularised",
    }
    authors = LudwigDataModule(path=str(ROOT))
    authors.setup()
    assert authors.group_names == ("Particularised", "Generalised", "Other")  # Hyperbole shown in no group
    assert [e["group"] for e in authors.datasets["test"]] == [2, 1, 2, 0, -1, 0]
    matched = LudwigDataModule(path=str(ROOT), types="matched")
    matched.setup()
    assert matched.group_names == ("Particularised", "Generalised", "Hyperbole")
    assert [matched.group_names[e["group"]] for e in matched.datasets["test"]][:3] == [
        "Particularised",
        "Generalised",
        "Generalised",
    ]
    with pytest.raises(ValueError, match="data.types='loose'"):
        LudwigDataModule(path=str(ROOT), types="loose")


def test_templates_read_like_the_authors_read_them():
    first, names, short = read_templates(TEMPLATES)
    # A literal backslash-n in the file is a newline; quotes inside a value are the text's own.
    assert first.example_template == "question: %s\nanswer: %s\nmeaning: %s" and first.line == 2
    assert first.fill("Is it late?", "The shops are shut.", "yes") == (
        "question: Is it late?\nanswer: The shops are shut.\nmeaning: yes"
    )
    assert names.example_template == 'Mina asked "%s" and Theo replied "%s", which means %s'
    assert (names.mask_phrase, names.bias_split_phrase) == ("means %s", "replied ")
    assert names.example_instruction == "Complete the text:"
    assert names.prompt_instruction == "Here are examples of the task:"
    assert short.fill("A", "B", "no") == "Q: A\nA: B\nImplied: no"
    (contrastive,) = read_templates(ROOT / "two_prompt_templates.txt")
    assert contrastive.example_instruction == "Look at the two texts below:"


def test_a_template_without_its_slots_names_file_line_and_field(tmp_path):
    bad = copy_with(tmp_path, TEMPLATES, '"Q: %s\\nA: %s\\nImplied: %s"', '"Q: %s\\nA: %s\\nImplied: yes"')
    with pytest.raises(DataFormatError) as err:
        read_templates(bad)
    message = str(err.value)
    assert f"{bad}:4 " in message and "field 'example_template_text'" in message and "found 2" in message
    extra = copy_with(tmp_path, TEMPLATES, '"question: %s\\nanswer: %s', '"question: %s %s\\nanswer: %s')
    with pytest.raises(DataFormatError, match=r":2 \(field 'example_template_text'\).*found 4"):
        read_templates(extra)
    mask = copy_with(tmp_path, TEMPLATES, '"means %s"', '"means"')
    with pytest.raises(DataFormatError, match=r":3 \(field 'phrase_to_put_mask'\)"):
        read_templates(mask)
    fields = copy_with(tmp_path, TEMPLATES, ';"Complete the text:"', "")
    with pytest.raises(DataFormatError, match=r":3: expected 5 ';'-separated quoted values, found 4"):
        read_templates(fields)
    column = copy_with(tmp_path, TEMPLATES, "phrase_to_put_mask;", "mask;")
    with pytest.raises(DataFormatError, match=r":1 \(header, column 'phrase_to_put_mask'\)"):
        read_templates(column)


def test_missing_column_bad_bytes_and_missing_test_file(tmp_path):
    bad = copy_with(tmp_path, TEST, "Response utterance", "Response")
    with pytest.raises(DataFormatError) as err:
        read_pairs(bad)
    assert str(bad) in str(err.value) and "'Response utterance'" in str(err.value)
    latin = tmp_path / "latin.csv"
    latin.write_bytes(TEST.read_bytes().replace(b"Is your brother", b"Is your br\xf6ther", 1))
    with pytest.raises(DataFormatError, match=r"latin.csv:12: not UTF-8"):
        read_pairs(latin)
    with pytest.raises(FileNotFoundError, match=r"test_file=.*test_conversational_implicatures.csv"):
        read_ludwig(ROOT, test_file="test_conversational_implicatures_first150.csv")


def test_type_labels_match_pairs_across_spellings():
    pairs, _ = read_pairs(TEST)
    labels, report = read_type_labels(ROOT / "type_labels.csv")
    assert report.rows_read == 7 and len(labels) == 7
    typed, unmatched = match_types(pairs, labels)
    # The label file writes \n for the test's \r\n, drops a leading space and straightens a curly quote.
    assert {i: label.type for i, label in typed.items()} == {
        0: "Particularised",
        1: "Generalised",
        2: "Generalised",
        3: "Particularised",
        4: "Hyperbole",
        5: "Particularised",
    }
    assert typed[5].factual_knowledge == "Np"  # as released
    assert [label.utterance for label in unmatched] == ["Is the sea warm today?"]


# -- the real excerpts --------------------------------------------------------------------------------
SAMPLE = SAMPLES / "ludwig"


@needs_samples
def test_real_pairs_and_templates():
    release = read_ludwig(SAMPLE, test_file="test_conversational_implicatures_first150.csv")
    assert len(release.dev) == 118 and len(release.test) == 150
    assert not release.dev_report.skipped and not release.test_report.skipped
    assert [sum(p.label == "yes" for p in split) for split in (release.dev, release.test)] == [52, 87]
    assert sum(bool(p.explanation) for p in release.dev + release.test) == 32
    assert len(release.dev_report.trimmed) == 10 and len(release.test_report.trimmed) == 15
    assert not any(p.utterance != p.utterance.strip() or "\r" in p.utterance for p in release.test)
    assert len(release.templates) == 6 and len(release.contrastive_templates) == 2
    assert release.templates[0].example_template == "question: %s\nresponse: %s\nimplicature: %s"
    authors = read_ludwig(
        SAMPLE, test_file="test_conversational_implicatures_first150.csv", as_authors_read=True
    )
    differ = [
        a for a, b in zip(authors.dev + authors.test, release.dev + release.test, strict=True) if a != b
    ]
    assert len(differ) == 16 and any(p.utterance.endswith("\r") for p in differ)


@needs_samples
def test_real_type_labels_match_test_pairs():
    release = read_ludwig(SAMPLE, test_file="test_conversational_implicatures_first150.csv")
    labels, report = read_type_labels(SAMPLE / "type_labels_shared_rows.csv")
    assert report.rows_read == len(labels) == 149
    typed, unmatched = match_types(release.test, labels)
    # 148 labels find their test pair (148 of the 150 pairs are typed); the one left is a dev pair's.
    assert len(typed) == 148 and [label.line for label in unmatched] == [152]
    assert match_types(release.dev, unmatched)[0].keys() == {32}
    assert all(split_implicature(label.implicature)[0] == release.test[i].label for i, label in typed.items())
    assert {label.type for label in typed.values()} == {
        "Particularised",
        "Generalised",
        "Idiom",
        "World knowledge",
        "Rhetorical question",
        "Hyperbole",
    }
