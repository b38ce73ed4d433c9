"""The transfer sources' readers and data modules (NLI, BoolQ): released formats (MultiNLI jsonl,
its .txt TSV, GLUE TSV, BoolQ jsonl), labels, rows without a gold label, errors that name the
file, line and field, dev carved out of train, the hub path, tokenization and checkpoint state."""

import json

import pytest
from conftest import FIXTURES, encoded_example

from pragexp.data.boolq import BOOLQ_SCHEMA, BoolQDataModule, parse_boolq_answer
from pragexp.data.common.files.pair_readers import read_pair_file
from pragexp.data.common.splits import carve_dev
from pragexp.data.nli import LABELS as NLI_LABELS
from pragexp.data.nli import NLI_SCHEMA, NLIDataModule, parse_nli_label
from pragexp.utils.errors import DataFormatError

DIR = FIXTURES / "transfer"
MNLI_TRAIN, MNLI_DEV_TSV = DIR / "multinli_1.0_train.jsonl", DIR / "MNLI_dev_matched.tsv"
BOOLQ_TRAIN, BOOLQ_DEV, BOOLQ_TEST = (
    DIR / "boolq_train.jsonl",
    DIR / "boolq_dev.jsonl",
    DIR / "boolq_test.jsonl",
)


def jsonl_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# -- NLI ---------------------------------------------------------------------------------------
def test_mnli_jsonl_labels_and_no_gold_rows_are_counted():
    rows, report = read_pair_file(MNLI_TRAIN, NLI_SCHEMA, setting="data.train_path")
    records = jsonl_lines(MNLI_TRAIN)
    gold = [r for r in records if r["gold_label"] != "-"]
    assert report.rows_read == 24 and report.no_gold_label == 2 and len(rows) == 22
    assert [NLI_LABELS[y] for _, y in rows] == [r["gold_label"] for r in gold]
    assert [(row.first, row.second) for row, _ in rows] == [(r["sentence1"], r["sentence2"]) for r in gold]
    # line numbers are the file's: the row after the first "-" row (line 10) is on line 11
    assert rows[9][0].line == 11 and rows[9][0].first.startswith("i don't really watch")


def test_glue_tsv_is_read_unquoted():
    rows, report = read_pair_file(MNLI_DEV_TSV, NLI_SCHEMA, setting="data.test_path")
    assert report.rows_read == 9 and report.no_gold_label == 0
    assert [y for _, y in rows] == [0, 2, 1] * 3
    # GLUE's TSV is not quoted: a '"' inside a sentence is text, not a quote
    assert rows[3][0].first == 'He said "I will be back" and left quietly.'
    assert rows[0][0].line == 2


def test_multinli_txt_short_rows_and_dash_labels(tmp_path):
    # multinli_1.0_*.txt: gold_label first, sentence1/2 in the middle, annotator columns at the end
    header = (
        "gold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2\tlabel1\tlabel2"
    )
    path = tmp_path / "multinli_1.0_dev_matched.txt"
    path.write_text(
        "\r\n".join(
            [
                header,
                "neutral\t( a )\t( b )\tA man sleeps.\tA man dreams.\tneutral\tneutral",
                "-\t( a )\t( b )\tA man sleeps.\tA man runs.\tneutral\tcontradiction",
                "Contradiction\t( a )\t( b )\tA man sleeps.\tA man is awake.",  # no annotator columns
            ]
        )
        + "\r\n"
    )
    rows, report = read_pair_file(path, NLI_SCHEMA, setting="data.val_path")
    assert [(r.second, y) for r, y in rows] == [("A man dreams.", 1), ("A man is awake.", 2)]
    assert report.no_gold_label == 1 and report.rows_read == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("entailment", 0),
        (" Neutral ", 1),
        ("contradiction", 2),
        (2, 2),
        (-1, None),
        ("-", None),
        (None, None),
    ],
)
def test_nli_label_values(value, expected):
    assert parse_nli_label(value) == expected


@pytest.mark.parametrize("value", ["entails", 3, True, 1.0])
def test_nli_unknown_labels_are_refused(value):
    with pytest.raises(ValueError, match="unknown label"):
        parse_nli_label(value)


def test_bad_lines_name_file_line_and_field(tmp_path):
    good = jsonl_lines(MNLI_TRAIN)[:3]
    cases = {
        "missing_s2.jsonl": (
            [good[0], good[1], {k: v for k, v in good[2].items() if k != "sentence2"}],
            r"missing_s2.jsonl:3 \(field 'sentence2'\): missing field",
        ),
        "unknown.jsonl": (
            [good[0], {**good[1], "gold_label": "maybe"}],
            r"unknown.jsonl:2 \(field 'gold_label'\): unknown label 'maybe'",
        ),
        "no_label.jsonl": (
            [{k: v for k, v in good[0].items() if k != "gold_label"}],
            r"no_label.jsonl:1 \(field 'gold_label'\): missing field",
        ),
        "number.jsonl": (
            [good[0], {**good[1], "sentence1": 42}],
            r"number.jsonl:2 \(field 'sentence1'\): expected text, found int",
        ),
    }
    for name, (records, message) in cases.items():
        with pytest.raises(DataFormatError, match=message):
            read_pair_file(write_jsonl(tmp_path / name, records), NLI_SCHEMA, setting="data.train_path")

    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(good[0]) + "\n\n" + '{"sentence1": "cut off\n')
    with pytest.raises(DataFormatError, match=r"broken.jsonl:3: not valid JSON"):
        read_pair_file(broken, NLI_SCHEMA, setting="data.train_path")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(json.dumps(good[0]).encode() + b"\n" + '{"sentence1": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(DataFormatError, match=r"latin.jsonl:2: not UTF-8"):
        read_pair_file(latin, NLI_SCHEMA, setting="data.train_path")


def test_bad_tsv_header_and_rows_name_the_place(tmp_path):
    lines = MNLI_DEV_TSV.read_text().splitlines()
    no_gold = tmp_path / "test_matched.tsv"  # GLUE's test TSV has no gold_label column
    no_gold.write_text("\n".join(line.rsplit("\t", 1)[0] for line in lines) + "\n")
    with pytest.raises(
        DataFormatError, match=r"test_matched.tsv:1 \(header, field 'gold_label'\): missing column"
    ):
        read_pair_file(no_gold, NLI_SCHEMA, setting="data.test_path")
    long_row = tmp_path / "long.tsv"
    long_row.write_text("\n".join([*lines[:3], lines[3] + "\textra"]) + "\n")
    with pytest.raises(
        DataFormatError, match=r"long.tsv:4: expected at most 16 tab-separated fields, found 17"
    ):
        read_pair_file(long_row, NLI_SCHEMA, setting="data.test_path")
    short_row = tmp_path / "short.tsv"
    short_row.write_text("\n".join([*lines[:2], "\t".join(lines[2].split("\t")[:9])]) + "\n")
    with pytest.raises(DataFormatError, match=r"short.tsv:3 \(field 'sentence2'\): missing field"):
        read_pair_file(short_row, NLI_SCHEMA, setting="data.test_path")
    with pytest.raises(FileNotFoundError, match=r"set data.val_path="):
        read_pair_file(tmp_path / "absent.jsonl", NLI_SCHEMA, setting="data.val_path")


def test_nli_datamodule_carves_dev_out_of_train_and_writes_the_report(tmp_path):
    out = tmp_path / "run"
    dm = NLIDataModule(
        train_path=str(MNLI_TRAIN), test_path=str(MNLI_DEV_TSV), dev_fraction=0.2, report_dir=str(out)
    )
    dm.setup("fit")
    report = json.loads((out / "data_report.json").read_text())
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temp file left behind
    assert report["sources"]["train"] == {
        "source": str(MNLI_TRAIN),
        "rows_read": 24,
        "no_gold_label": 2,
        "kept": 22,
    }
    assert report["no_gold_label"] == 2 and report["split_sizes"] == {"train": 18, "val": 4, "test": 9}
    assert report["dev"].startswith("carved from train")
    assert report["label_counts"]["test"] == {"entailment": 3, "neutral": 3, "contradiction": 3}
    assert sum(report["label_counts"]["val"].values()) == 4
    train_pairs = {(r.first, r.second) for r, _ in dm.splits["train"]}
    assert not train_pairs & {(r.first, r.second) for r, _ in dm.splits["val"]}
    assert dm.num_labels == 3 and dm.label_slugs == NLI_LABELS


def test_carve_dev_is_seeded_and_a_partition():
    train, dev = carve_dev(50, 0.2, seed=1)
    assert len(dev) == 10 and sorted(train + dev) == list(range(50))
    assert carve_dev(50, 0.2, seed=1) == (train, dev)
    assert carve_dev(50, 0.2, seed=2)[1] != dev
    assert len(carve_dev(3, 0.01, seed=0)[1]) == 1  # at least one dev row
    with pytest.raises(ValueError, match="data.val_path"):
        carve_dev(1, 0.2, seed=0)


def test_a_given_val_file_is_used_as_is():
    dm = NLIDataModule(train_path=str(MNLI_TRAIN), val_path=str(MNLI_DEV_TSV), test_path=str(MNLI_DEV_TSV))
    dm.setup("fit")
    assert len(dm.splits["train"]) == 22 and len(dm.splits["val"]) == 9 and dm.report["dev"] == "given"


def test_hub_splits_labels_and_dev_carve(monkeypatch):
    import datasets

    hub = {
        "train": [{"premise": f"p{i}", "hypothesis": f"h{i}", "label": i % 4 - 1} for i in range(40)],
        "validation_matched": [{"premise": "p", "hypothesis": "h", "label": 2}] * 5,
    }
    loaded = []

    def fake_load_dataset(name, split):
        loaded.append((name, split))
        return hub[split]

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    dm = NLIDataModule(dev_fraction=0.1)
    dm.setup("fit")
    assert loaded == [("nyu-mll/multi_nli", "train"), ("nyu-mll/multi_nli", "validation_matched")]
    assert dm.report["sources"]["train"]["no_gold_label"] == 10  # the -1 labels
    assert dm.report["split_sizes"] == {"train": 27, "val": 3, "test": 5}
    assert dm.report["sources"]["test"]["source"] == "hub:nyu-mll/multi_nli[validation_matched]"
    assert {(r.first, y) for r, y in dm.splits["train"] + dm.splits["val"]} == {
        (f"p{i}", i % 4 - 1) for i in range(40) if i % 4
    }


def test_offline_hub_error_names_data_train_path():
    for module in (NLIDataModule(), BoolQDataModule()):
        with pytest.raises(RuntimeError, match=r"data.train_path is not set .* set data.train_path="):
            module.setup("fit")


# -- BoolQ -------------------------------------------------------------------------------------
def test_boolq_jsonl_answers_and_input_order():
    rows, report = read_pair_file(BOOLQ_TRAIN, BOOLQ_SCHEMA, setting="data.train_path")
    records = jsonl_lines(BOOLQ_TRAIN)
    assert report.rows_read == 18 and report.no_gold_label == 0
    assert [y for _, y in rows] == [int(r["answer"]) for r in records]
    assert rows[0][0].first == records[0]["question"] and rows[0][0].second == records[0]["passage"]

    dm = BoolQDataModule(
        train_path=str(BOOLQ_TRAIN), test_path=str(BOOLQ_DEV), tokenizer="tiny", tiny_vocab_size=300
    )
    dm.setup("fit")
    assert dm.label_names == ("no", "yes") and dm.report["split_sizes"]["test"] == 6
    row, label = dm.splits["test"][0]
    ids, types = encoded_example(dm, "test", 0)
    tokens = [dm.tokenizer.id_to_token(i) for i in ids]
    first_sep = tokens.index("[SEP]")
    # "[CLS] question [SEP] passage [SEP]"
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and tokens.count("[SEP]") == 2
    plain = dm.tokenizer.encode  # truncation applies to pairs; each text alone fits here
    assert ids[1:first_sep] == plain(row.first, add_special_tokens=False).ids
    assert ids[first_sep + 1 : -1] == plain(row.second, add_special_tokens=False).ids
    assert row.first.startswith("is the amazon")
    assert all(t == 1 for t in types[first_sep + 1 :])
    assert dm.datasets["test"][0]["label"] == label == 1


def test_boolq_test_split_without_answers_says_use_dev():
    with pytest.raises(
        DataFormatError, match=r"boolq_test.jsonl:1 \(field 'answer'\): missing field; .*dev.jsonl"
    ):
        BoolQDataModule(train_path=str(BOOLQ_TRAIN), test_path=str(BOOLQ_TEST)).setup("fit")


def test_boolq_null_answers_are_counted_and_superglue_labels_read(tmp_path):
    records = jsonl_lines(BOOLQ_DEV)
    path = write_jsonl(
        tmp_path / "val.jsonl",
        [
            {**records[0], "answer": None},
            *records[1:4],
            {"question": "q", "passage": "p", "idx": 9, "label": True},
        ],
    )
    rows, report = read_pair_file(path, BOOLQ_SCHEMA, setting="data.val_path")
    assert report.no_gold_label == 1 and [y for _, y in rows] == [0, 1, 0, 1]
    only_null = write_jsonl(tmp_path / "null.jsonl", [{**records[0], "answer": None}])
    with pytest.raises(DataFormatError, match=r"null.jsonl: no row has a gold label \(1 rows read\)"):
        BoolQDataModule(train_path=str(BOOLQ_TRAIN), test_path=str(only_null)).setup("fit")
    assert [parse_boolq_answer(v) for v in (True, False, "True", "no", 1, "")] == [1, 0, 1, 0, 1, None]
    with pytest.raises(ValueError, match="unknown label 'maybe'"):
        parse_boolq_answer("maybe")


# -- checkpoint state and evaluation-only data ---------------------------------------------------
def test_tokenizer_state_restores_for_test_only_data():
    trained = NLIDataModule(
        train_path=str(MNLI_TRAIN), test_path=str(MNLI_DEV_TSV), tokenizer="tiny", tiny_vocab_size=300
    )
    trained.setup("fit")
    state = trained.state_dict()
    assert state["label_names"] == list(NLI_LABELS) and state["tokenizer"]

    # evaluation: only the test file, the checkpoint's tokenizer (a hub name would need the network)
    evaluating = NLIDataModule(test_path=str(MNLI_DEV_TSV), tokenizer="bert-base-uncased")
    evaluating.load_state_dict(state)
    evaluating.setup("test")
    assert set(evaluating.splits) == {"test"}
    n = len(trained.datasets["test"])
    assert [encoded_example(evaluating, "test", i) for i in range(n)] == [
        encoded_example(trained, "test", i) for i in range(n)
    ]
    with pytest.raises(ValueError, match=r"no train split: set data.train_path"):
        evaluating.train_dataloader()
    assert evaluating.val_dataloader() == []  # a test file alone: no dev split to score
    evaluating.datasets["train"] = []  # with training data, a missing dev split is an error that says why
    with pytest.raises(ValueError, match=r"no val split: set data.val_path, or data.train_path"):
        evaluating.val_dataloader()
    untrained = NLIDataModule(test_path=str(MNLI_DEV_TSV), tokenizer="tiny")
    with pytest.raises(ValueError, match="trains its tokenizer on the training split"):
        untrained.setup("test")


def test_a_checkpoint_of_another_label_set_is_refused():
    nli = NLIDataModule(train_path=str(MNLI_TRAIN), test_path=str(MNLI_DEV_TSV), tokenizer="tiny")
    nli.setup("fit")
    boolq = BoolQDataModule(train_path=str(BOOLQ_TRAIN), test_path=str(BOOLQ_DEV), tokenizer="tiny")
    with pytest.raises(
        ValueError, match=r"trained on the labels \['entailment', 'neutral', 'contradiction'\]"
    ):
        boolq.load_state_dict(nli.state_dict())


def test_majority_batches_carry_labels_only():
    dm = BoolQDataModule(train_path=str(BOOLQ_TRAIN), test_path=str(BOOLQ_DEV), batch_size=4)
    dm.setup("fit")
    batch = next(iter(dm.train_dataloader()))
    assert dm.vocab_size is None and batch["inputs"] == {"num_examples": 4}
