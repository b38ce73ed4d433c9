"""Circa reader, label selection, splits (matched sizes, leave-one-scenario-out folds), tokenization
and dynamic padding, on an invented file in the released format (tests/fixtures/circa/); the real
excerpt in ../shared/samples/circa/ is read too when it is there."""

import json

import pytest
from conftest import CIRCA_FIXTURE, SAMPLES, encoded_example, needs_samples

from pragexp.data.circa.datamodule import CircaDataModule
from pragexp.data.circa.io import LABELS, read_circa_hub, read_circa_tsv, select_labelled
from pragexp.data.common.splits import leave_one_group_out, matched_split, matched_split_sizes
from pragexp.data.common.tokens import tokenization as tt
from pragexp.utils.errors import DataFormatError

SAMPLE = CIRCA_FIXTURE
NOT_SURE_CURLY = "I am not sure how X will interpret Y\u2019s answer"


def sample_lines():
    return SAMPLE.read_text(encoding="utf-8").splitlines()


def write(path, lines):
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    return path


def with_labels(line: str, strict: str, relaxed: str) -> str:
    fields = line.split("\t")
    fields[6], fields[7] = strict, relaxed
    return "\t".join(fields)


# -- reading a file as released -----------------------------------------------------------------
def test_rows_labels_and_drops():
    rows, report = read_circa_tsv(SAMPLE)
    assert report.rows_read == 80 and not report.corrupt and not report.odd_text and len(rows) == 80
    assert rows[0].id == "2001" and rows[0].question == "Do you like your new car?"
    assert rows[0].answer == "It has its good and bad points." and rows[0].line == 2
    assert rows[0].strict == rows[0].relaxed == "In the middle, neither yes nor no"
    assert not any(r.answer.endswith("\r") or r.relaxed and r.relaxed.endswith("\r") for r in rows)

    relaxed, dropped = select_labelled(rows, "relaxed")
    assert dict(dropped) == {"Other": 9, "no majority label": 1} and len(relaxed) == 70
    strict, dropped = select_labelled(rows, "strict")
    # The curly-apostrophe label (10 rows) is recognised and dropped, not kept or corrupt.
    assert dict(dropped) == {"Other": 9, "no majority label": 9, "I am not sure": 10} and len(strict) == 52
    assert {LABELS["strict"][y] for _, y in strict} == set(LABELS["strict"])
    assert {LABELS["relaxed"][y] for _, y in relaxed} == set(LABELS["relaxed"])


def test_missing_values_straight_apostrophe_and_corrupt_rows_are_counted(tmp_path):
    lines = sample_lines()
    header, body = lines[0], lines[1:]
    edited = [
        with_labels(body[0], "NA", "nan"),  # line 2: missing both
        with_labels(body[1], "nan", "NA"),  # line 3: missing both
        with_labels(body[2], "I am not sure how X will interpret Y's answer", "Yes"),  # line 4
        "\t".join(body[3].split("\t")[:5]),  # line 5: truncated row
        "\t".join([*body[4].split("\t")[:4], '{"answer": "yes"}', *body[4].split("\t")[5:]]),  # line 6: JSON
        "\t".join(["abc", *body[5].split("\t")[1:]]),  # line 7: id not a number
        with_labels(body[6], "Maybe", "Yes"),  # line 8: unknown label
        *body[7:],
    ]
    path = write(tmp_path / "circa.tsv", [header, *edited])
    rows, report = read_circa_tsv(path)
    corrupt = dict(report.corrupt)
    assert sorted(corrupt) == [5, 7, 8]
    assert "expected 8 tab-separated fields, found 5" in corrupt[5]
    assert "'id'" in corrupt[7] and "'goldstandard1'" in corrupt[8]
    # A JSON fragment in the answer is odd text, not an unreadable row: the paper kept such rows.
    assert [line for line, _ in report.odd_text] == [6]
    assert "'answer-Y'" in report.odd_text[0][1] and "JSON" in report.odd_text[0][1]
    assert 6 in {r.line for r in rows}
    assert report.rows_read == 80 and len(rows) == 77
    untouched = [line.split("\t") for line in body[7:]]
    _, dropped = select_labelled(rows, "strict")
    # The straight apostrophe (line 4) is the same label as the release's curly one.
    assert dropped["I am not sure"] == sum(f[6] == NOT_SURE_CURLY for f in untouched) + 1
    _, dropped_relaxed = select_labelled(rows, "relaxed")
    assert dropped_relaxed["no majority label"] == sum(f[7] == "" for f in untouched) + 2


def test_datamodule_reports_drops_and_corrupt_rows(tmp_path):
    lines = sample_lines()
    path = write(tmp_path / "circa.tsv", [*lines, "9999\tonly three\tfields", lines[1]])
    dm = CircaDataModule(path=str(path), labels="relaxed", report_dir=str(tmp_path / "out"))
    dm.setup("fit")
    report = json.loads((tmp_path / "out" / "data_report.json").read_text())
    assert report["corrupt"] == 1 and report["corrupt_rows"][0]["line"] == 82
    assert report["dropped"] == {"Other": 9, "no majority label": 1}
    assert report["kept"] == 71 and sum(report["split_sizes"].values()) == 71
    assert report["label_counts"]["train"] == dict(
        zip(LABELS["relaxed"], dm.label_counts("train"), strict=True)
    )


def test_empty_file_missing_file_and_missing_column_name_the_place(tmp_path):
    with pytest.raises(FileNotFoundError, match="data.path"):
        read_circa_tsv(tmp_path / "absent.tsv")
    header, *body = sample_lines()
    bad = write(tmp_path / "no_gold.tsv", [header.replace("\tgoldstandard2", ""), *body])
    with pytest.raises(
        DataFormatError, match=r"no_gold.tsv:1 \(header, field 'goldstandard2'\): missing column"
    ):
        read_circa_tsv(bad)
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    with pytest.raises(DataFormatError, match=r"empty.tsv:1: empty file"):
        read_circa_tsv(empty)


def test_offline_hub_error_names_data_path():
    with pytest.raises(RuntimeError, match=r"data.path is not set .* set data.path="):
        read_circa_hub("google-research-datasets/circa")


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="data.labels"):
        CircaDataModule(path=str(SAMPLE), labels="loose")
    with pytest.raises(ValueError, match="data.setting"):
        CircaDataModule(path=str(SAMPLE), setting="mixed")
    with pytest.raises(ValueError, match="data.input"):
        CircaDataModule(path=str(SAMPLE), input="context")


# -- splits ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "sizes"), [(32993, (19795, 6599, 6599)), (30958, (18574, 6192, 6192))])
def test_matched_split_sizes_are_the_papers(n, sizes):
    assert matched_split_sizes(n) == sizes
    split = matched_split(n, seed=0)
    assert tuple(len(split[s]) for s in ("train", "val", "test")) == sizes
    assert sorted(split["train"] + split["val"] + split["test"]) == list(range(n))


def test_matched_split_is_seeded():
    assert matched_split(100, seed=3) == matched_split(100, seed=3)
    assert matched_split(100, seed=3)["test"] != matched_split(100, seed=4)["test"]


@pytest.mark.parametrize("labels", ["relaxed", "strict"])
def test_each_scenario_is_held_out_exactly_once_without_leakage(labels):
    rows, _ = read_circa_tsv(SAMPLE)
    kept, _ = select_labelled(rows, labels)
    contexts = [r.context for r, _ in kept]
    names = sorted(set(contexts))
    assert len(names) == 10
    held_out = []
    for fold in range(10):
        split, name = leave_one_group_out(contexts, fold, seed=0, kind="scenarios")
        assert name == names[fold]
        test_contexts = {contexts[i] for i in split["test"]}
        assert len(test_contexts) == 1
        held_out.append(test_contexts.pop())
        assert held_out[-1] not in {contexts[i] for i in split["train"] + split["val"]}
        assert sorted(split["train"] + split["val"] + split["test"]) == list(range(len(kept)))
        assert split["val"] and split["train"]
    assert sorted(held_out) == names
    with pytest.raises(ValueError, match=r"data.fold=10 is out of range: the data has 10 scenarios"):
        leave_one_group_out(contexts, 10, seed=0, kind="scenarios")


# -- tokenization and batches ------------------------------------------------------------------
def tiny_dm(**kwargs):
    dm = CircaDataModule(path=str(SAMPLE), tokenizer="tiny", tiny_vocab_size=300, batch_size=8, **kwargs)
    dm.setup("fit")
    return dm


@pytest.mark.parametrize(("mode", "has_second"), [("qa", True), ("question", False), ("answer", False)])
def test_inputs_are_cls_a_sep_b_sep(mode, has_second):
    dm = tiny_dm(input=mode)
    tok = dm.tokenizer
    row, _ = dm.splits["train"][0]
    ids, types = encoded_example(dm, "train", 0)
    tokens = [tok.id_to_token(i) for i in ids]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert tokens.count("[SEP]") == (2 if has_second else 1)
    assert any(types) == has_second
    text = {"qa": row.question, "question": row.question, "answer": row.answer}[mode]
    first = tok.encode(text).ids[1 : 1 + len(tok.encode(text, add_special_tokens=False).ids)]
    assert ids[1 : 1 + len(first)] == first


def test_batches_are_padded_to_their_longest_and_keep_dataset_order():
    dm = tiny_dm()
    lengths = [len(encoded_example(dm, "val", i)[0]) for i in range(len(dm.datasets["val"]))]
    batch = next(iter(dm.val_dataloader()))
    ids, mask = batch["inputs"]["input_ids"], batch["inputs"]["attention_mask"]
    n = ids.shape[0]
    assert batch["index"].tolist() == list(range(n))  # no sorting: the batch is the next n examples
    assert ids.shape[1] == max(lengths[:n])
    assert mask.sum(1).tolist() == lengths[:n]
    assert (ids[mask == 0] == tt.pad_id(dm.tokenizer)).all()
    assert batch["label"].tolist() == [y for _, y in dm.splits["val"][:n]]


def test_tokenizer_travels_in_the_state_dict_and_is_deterministic():
    a, b = tiny_dm(), tiny_dm()
    assert a.tokenizer.to_str() == b.tokenizer.to_str()
    state = a.state_dict()
    assert state["labels"] == "relaxed" and "tokenizer" in state
    other = CircaDataModule(path=str(SAMPLE), tokenizer="bert-base-uncased")  # would need the hub
    other.load_state_dict(state)
    other.setup("test")  # no hub access: the checkpoint's tokenizer is used
    n = len(a.datasets["test"])
    assert [encoded_example(other, "test", i) for i in range(n)] == [
        encoded_example(a, "test", i) for i in range(n)
    ]
    strict = CircaDataModule(path=str(SAMPLE), labels="strict", tokenizer="tiny")
    with pytest.raises(ValueError, match="data.labels=relaxed"):
        strict.load_state_dict(state)


def test_no_tokenizer_gives_label_only_batches():
    dm = CircaDataModule(path=str(SAMPLE), tokenizer=None, batch_size=8)
    dm.setup("fit")
    assert dm.vocab_size is None
    batch = next(iter(dm.train_dataloader()))
    assert batch["inputs"] == {"num_examples": 8} and batch["label"].shape == (8,)


def test_crlf_and_utf8_bom_copy_reads_the_same(tmp_path):
    copy = tmp_path / "bom.tsv"
    copy.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes().replace(b"\r\n", b"\n"))
    assert read_circa_tsv(copy)[0] == read_circa_tsv(SAMPLE)[0]


def test_pad_collate_pads_with_the_tokenizer():
    tok = tt.configure(tt.train_wordpiece(["a b c d", "e f"], vocab_size=50), max_length=16)
    batch = tt.PadCollate(tok)(
        [
            {"text": "a b", "text_pair": "c", "label": 1, "index": 4, "cluster": 0},
            {"text": "e", "text_pair": "f", "label": 0, "index": 5, "cluster": 0},
        ]
    )
    ids, mask, types = (batch["inputs"][k] for k in ("input_ids", "attention_mask", "token_type_ids"))
    assert mask.tolist() == [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0]]
    assert ids[1, -1] == tt.pad_id(tok) and types.tolist()[0] == [0, 0, 0, 0, 1, 1]
    assert batch["index"].tolist() == [4, 5] and batch["group"].tolist() == [-1, -1]
    assert batch["cluster"].tolist() == [0, 0]  # two answers to one question: one sampling unit


def test_rows_kept_with_odd_text_are_counted_in_the_data_report(tmp_path):
    header, *body = sample_lines()
    odd = "\t".join([*body[3].split("\t")[:4], '{"answer": "yes", "id": 3}', *body[3].split("\t")[5:]])
    path = write(tmp_path / "circa.tsv", [header, *body[:3], odd, *body[4:]])
    dm = CircaDataModule(path=str(path), labels="relaxed", report_dir=str(tmp_path / "out"))
    dm.setup("fit")
    report = json.loads((tmp_path / "out" / "data_report.json").read_text())
    assert report["corrupt"] == 0 and report["odd_text"] == 1
    assert report["odd_text_rows"][0]["line"] == 5 and "JSON fragment" in report["odd_text_rows"][0]["reason"]
    assert report["kept"] == 70  # the odd row's label is valid: it is kept, as the paper kept it


# -- the real excerpt (../shared/samples), when present ------------------------------------------
@needs_samples
def test_real_excerpt_reads_with_its_quirks():
    rows, report = read_circa_tsv(SAMPLES / "circa" / "circa-sample.tsv")
    assert report.rows_read == 80 and not report.corrupt and len(rows) == 80
    relaxed, dropped = select_labelled(rows, "relaxed")
    assert dict(dropped) == {"Other": 9, "no majority label": 1} and len(relaxed) == 70
    strict, dropped = select_labelled(rows, "strict")
    assert dict(dropped) == {"Other": 9, "no majority label": 9, "I am not sure": 10} and len(strict) == 52
    assert len({r.context for r in rows}) == 10
