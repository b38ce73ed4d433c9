import json

import pytest
import torch
from conftest import GRICE_FIXTURE, SAMPLES, needs_samples

from pragexp.data.common.tokens.vocab import Vocabulary, tokenize
from pragexp.data.grice.examples import collate, qa_examples, recovery_examples
from pragexp.data.grice.io import read_dialogues
from pragexp.utils.errors import DataFormatError

SAMPLE = GRICE_FIXTURE  # invented dialogues, written the way the official per-type files are


def write(tmp_path, doc, name="bad.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def one_dialogue(**round_changes):
    rnd = {
        "question": "did you see the apples",
        "answer": "there is a basket in the kitchen",
        "explict_answer": "the apples are in the kitchen",
        "option": ["the apples are in the kitchen", "a", "b", "c"],
        "answer_index": 0,
    }
    rnd.update(round_changes)
    return {
        "data": {"dialogs": [{"dialog_id": 7, "dialog": [rnd], "question": []}]},
        "split": "x",
        "version": "v0.1",
    }


TYPES = {"close_but", "ignorance", "limiting", "relevance", "strengthening"}


def test_reads_official_format_with_types_from_test_condition():
    dialogues = read_dialogues(SAMPLE)
    assert len(dialogues) == 10
    assert {d.implicature for d in dialogues} == TYPES
    assert all(r.implicature is None for d in dialogues for r in d.rounds)  # typed by file, not round
    first = dialogues[0].rounds[0]
    assert first.options[first.answer_index] == first.explicit
    assert dialogues[0].questions[0].answer == "no"


@needs_samples
def test_reads_the_real_release_excerpt():
    dialogues = read_dialogues(SAMPLES / "grice" / "impl_dial_sample.json")
    assert len(dialogues) == 10 and {d.implicature for d in dialogues} == TYPES
    assert all(r.options[r.answer_index] == r.explicit for d in dialogues for r in d.rounds)


def test_type_comes_from_official_file_name(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    for d in doc["data"]["dialogs"]:
        d.pop("test_condition")
    path = write(tmp_path, doc, "impl_dial_v0.1_ig.json")
    assert {d.implicature for d in read_dialogues(path)} == {"ignorance"}


def test_malformed_json_names_file_and_line(tmp_path):
    path = write(tmp_path, '{"data": {"dialogs": [\n  {"dialog_id": 1,,}\n]}}')
    with pytest.raises(DataFormatError, match=r"bad\.json:2: malformed JSON"):
        read_dialogues(path)


def test_missing_key_names_file_dialogue_and_key(tmp_path):
    doc = one_dialogue()
    del doc["data"]["dialogs"][0]["dialog"][0]["answer_index"]
    with pytest.raises(
        DataFormatError, match=r"bad\.json \(dialog_id 7, round 0\): missing key 'answer_index'"
    ):
        read_dialogues(write(tmp_path, doc))


def test_answer_index_out_of_range(tmp_path):
    with pytest.raises(
        DataFormatError, match=r"dialog_id 7, round 0\): field 'answer_index' is 4, outside 0..3"
    ):
        read_dialogues(write(tmp_path, one_dialogue(answer_index=4)))


def test_wrong_option_count_and_unknown_type(tmp_path):
    with pytest.raises(DataFormatError, match="'option' must hold 4 strings"):
        read_dialogues(write(tmp_path, one_dialogue(option=["a", "b"])))
    with pytest.raises(DataFormatError, match="'implicature' is 'sarcasm'"):
        read_dialogues(write(tmp_path, one_dialogue(implicature="sarcasm")))


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.json"):
        read_dialogues(tmp_path / "nowhere.json")


def test_vocabulary_maps_unseen_words_to_unk_and_round_trips():
    vocab = Vocabulary.build(["the apples are in the dining_room", "I didn't"])
    assert tokenize("I didn't see the Dining_Room.") == ["i", "didn't", "see", "the", "dining_room"]
    ids = vocab.encode("the zebras are in the dining_room")
    assert ids[1] == vocab.unk_id and ids[0] == vocab.id("the") != vocab.unk_id
    assert Vocabulary.from_state_dict(vocab.state_dict()).itos == vocab.itos


def test_examples_and_collate_shapes():
    dialogues = read_dialogues(SAMPLE)
    vocab = Vocabulary.build(
        t for d in dialogues for r in d.rounds for t in (r.question, r.answer, *r.options)
    )
    rec = recovery_examples(dialogues, vocab)
    assert len(rec) == sum(len(d.rounds) for d in dialogues)
    assert rec[0]["history"] == [] and len(rec[1]["history"]) == 1
    batch = collate(rec[:5])
    assert batch["candidates"].shape[:2] == (5, 4) and batch["history"].shape[0] == 5
    assert torch.equal(batch["index"], torch.arange(5))
    answers = Vocabulary(["no", "yes"], specials=(Vocabulary.UNK,))
    qa = qa_examples(dialogues, vocab, answers)
    assert len(qa) == sum(len(d.questions) for d in dialogues)
    assert qa[0]["label"] == answers.id("no")
