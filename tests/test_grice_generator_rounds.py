"""Property tests of the GRICE generator's rounds (pragexp.data.grice): the gold answer true, known and
rendered, the distractors wrong and distinct, the QA answers right, the record's schema (against the official
sample's too); truth checked by the independent evaluator of tests/grice_truth.py."""

from __future__ import annotations

import json

from grice_cases import GEN, LEX, SETTINGS, dialog_ids, seeds, shared, splits
from grice_truth import qa_expected, true_in_world, woman_knows
from hypothesis import given

from pragexp.data.grice.generator import (
    IMPLICATURE_TYPES,
    SUBTOPICS,
)
from pragexp.data.grice.generator.grammar import SUPPORT
from pragexp.data.grice.generator.render import explicit


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_gold_true_known_and_rendered(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    w = d.world
    for r, rec in zip(d.rounds, d.record["dialog"], strict=True):
        assert true_in_world(w, r.gold), (rec, r.gold)
        kind = type(r.gold).__name__
        if kind not in ("NotSure", "DontKnow"):
            assert woman_knows(w, r.gold), (rec, r.gold)  # she never states what she does not know
        else:  # what she does not know: an ignorance round, or a plain "I have no idea"
            assert rec["implicature"] == "ignorance" or (
                rec["implicature"] == "explicit" and kind == "DontKnow"
            ), rec
        assert explicit(r.gold, LEX) == rec["explict_answer"]
        assert rec["option"][rec["answer_index"]] == rec["explict_answer"]


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_distractors_wrong_distinct_and_not_paraphrases(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    w = d.world
    for r, rec in zip(d.rounds, d.record["dialog"], strict=True):
        opts = rec["option"]
        assert len(opts) == 4 and len(set(opts)) == 4
        assert 0 <= rec["answer_index"] < 4
        assert len(r.distractors) == 3
        for f, text in r.distractors:
            assert text != rec["explict_answer"]
            assert text in opts and explicit(f, LEX) == text
            assert f.key() != r.gold.key(), (f, r.gold)  # not the gold's meaning in other words
            # a true distractor must not answer the round's question (else: 2 right answers)
            if true_in_world(w, f):
                assert r.topic not in f.topics(), (rec["question"], f, r.gold)


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_qa_answers_correct_single_words(split, dialog_id, seed):
    d = GEN.dialogue(split, dialog_id, seed)
    names = set(LEX.agents)
    for q, rec in zip(d.questions, d.record["question"], strict=True):
        assert rec["answer"] == q.answer == qa_expected(d.world, q.query), (rec, q.query)
        assert " " not in rec["answer"] and rec["answer"]
        assert (
            rec["answer"] in names or rec["answer"] in LEX.locations or rec["answer"] == rec["answer"].lower()
        )
        assert rec["implicature"] == d.rounds[q.round_index].implicature


@SETTINGS
@given(split=splits, dialog_id=dialog_ids, seed=seeds)
def test_schema(split, dialog_id, seed):
    rec = GEN.dialogue(split, dialog_id, seed).record
    assert isinstance(rec["dialog_id"], int) and rec["dialog_id"] == dialog_id
    for r in rec["dialog"]:
        assert list(r) == [
            "question",
            "answer",
            "explict_answer",
            "option",
            "answer_index",
            "implicature",
            "subtopic",
        ]
        assert all(isinstance(r[k], str) and r[k] for k in ("question", "answer", "explict_answer"))
        assert isinstance(r["option"], list) and all(isinstance(o, str) for o in r["option"])
        assert isinstance(r["answer_index"], int)
        assert r["implicature"] in IMPLICATURE_TYPES and r["subtopic"] in SUBTOPICS
        assert any(s == r["subtopic"] for _, s in SUPPORT[r["implicature"]])
    for q in rec["question"]:
        assert set(q) == {"question", "answer", "implicature"}
        assert q["implicature"] in IMPLICATURE_TYPES
    assert ("test_condition" in rec) == (split == "test")
    json.loads(json.dumps(rec))


def test_schema_matches_official_sample():
    official = json.loads(shared("impl_dial_sample.json").read_text())
    ours = GEN.dialogue("test", 0, 0).record
    o_dial = official["data"]["dialogs"][0]
    assert set(o_dial) <= set(ours)
    assert set(o_dial["dialog"][0]) <= set(ours["dialog"][0])
    assert set(o_dial["question"][0]) <= set(ours["question"][0])
    assert {d["test_condition"] for d in official["data"]["dialogs"]} == {"re", "st", "li", "ig", "cb"}


def test_official_qa_answer_words_are_generated():
    """Every answer word of the release's questions (abstracted to its kind) is one we produce."""
    data = json.loads(shared("official_dev/impl_dial_v0.1_cb.json").read_text())
    names, locs, nums = set(LEX.agents), set(LEX.locations), set(LEX.numbers)

    def kind(a):
        return "AGENT" if a in names else "LOC" if a in locs else "NUM" if a in nums else a

    official = {kind(q["answer"]) for d in data["data"]["dialogs"] for q in d["question"]}
    ours = {kind(q["answer"]) for rec in GEN.dialogs("test", 500, seed=1) for q in rec["question"]}
    assert official <= ours, official - ours
